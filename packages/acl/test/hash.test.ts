import { createHash, randomBytes } from 'node:crypto';
import { blake2b, policyHash, tokenHash } from '@registry/acl';

describe('blake2b', () => {
  test.each([0, 1, 3, 127, 128, 129, 256, 1000])('64-byte output equals Node blake2b512 for %i input bytes', (n) => {
    const data = randomBytes(n);
    expect(blake2b(data, 64).toString('hex')).toBe(createHash('blake2b512').update(data).digest('hex'));
  });

  test('BLAKE2b-256 of "abc" is the published test value', () => {
    expect(blake2b(Buffer.from('abc'), 32).toString('hex')).toBe(
      'bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319',
    );
  });

  test('a 256-bit digest is not the 512-bit one truncated', () => {
    const data = Buffer.from('registry');
    expect(blake2b(data, 32).equals(blake2b(data, 64).subarray(0, 32))).toBe(false);
  });

  test('rejects output lengths outside 1..64', () => {
    expect(() => blake2b(Buffer.alloc(0), 0)).toThrow(RangeError);
    expect(() => blake2b(Buffer.alloc(0), 65)).toThrow(RangeError);
  });
});

describe('tokenHash', () => {
  const base = { Description: 'web token', Local: false, PolicyIDs: ['p1', 'p2'] };

  test('is 44 characters of base64 (32 bytes)', () => {
    const h = tokenHash(base);
    expect(h).toHaveLength(44);
    expect(Buffer.from(h, 'base64')).toHaveLength(32);
  });

  test('equals BLAKE2b-256 over description, type, rules, locality and policy IDs concatenated', () => {
    const expected = blake2b(Buffer.from('web token' + 'management' + '' + 'local' + 'p1p2'), 32).toString('base64');
    expect(tokenHash({ ...base, Type: 'management', Local: true })).toBe(expected);
  });

  test.each([
    ['description', { ...base, Description: 'other' }],
    ['locality', { ...base, Local: true }],
    ['policy order', { ...base, PolicyIDs: ['p2', 'p1'] }],
    ['policies', { ...base, PolicyIDs: ['p1'] }],
    ['type', { ...base, Type: 'management' }],
  ])('changes when the %s changes', (_what, changed) => {
    expect(tokenHash(changed)).not.toBe(tokenHash(base));
  });

  test('is stable for equal input', () => {
    expect(tokenHash({ ...base })).toBe(tokenHash(base));
  });
});

describe('policyHash', () => {
  const base = { Name: 'web', Description: 'd', Rules: 'service "web" { policy = "write" }', Datacenters: ['dc1'] };

  test('equals BLAKE2b-256 over name, description, rules and datacenters concatenated', () => {
    const expected = blake2b(Buffer.from(base.Name + base.Description + base.Rules + 'dc1'), 32).toString('base64');
    expect(policyHash(base)).toBe(expected);
  });

  test('renaming changes the hash', () => {
    expect(policyHash({ ...base, Name: 'web2' })).not.toBe(policyHash(base));
  });

  test('no datacenters hashes like an empty list', () => {
    expect(policyHash({ ...base, Datacenters: undefined })).toBe(policyHash({ ...base, Datacenters: [] }));
    expect(policyHash({ ...base, Datacenters: null })).not.toBe(policyHash(base));
  });
});
