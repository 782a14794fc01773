import type { IntentionOut } from '@registry/store';
import { decideIntention } from '../../src/connect/intention-decision';
import { parseMatchEntry } from '../../src/connect/match-entry';
import { SignLimiter } from '../../src/connect/sign-limiter';
import { renewalTime } from '../../src/connect/leaf-fetcher';

function intention(SourceName: string, Action: 'allow' | 'deny', Precedence: number, SourceNS = 'default'): IntentionOut {
  return {
    ID: `id-${SourceName}`, Description: '', SourceNS, SourceName, DestinationNS: 'default', DestinationName: 'db', SourceType: 'registry',
    Action, DefaultAddr: '', DefaultPort: 0, Meta: {}, Precedence, CreatedAt: '', UpdatedAt: '', CreateIndex: 1, ModifyIndex: 1,
  };
}

describe('decideIntention', () => {
  const web = { namespace: 'default', name: 'web' };
  const off = { aclsEnabled: false, defaultAllow: false };
  test('the first intention whose source covers the caller decides', () => {
    const d = decideIntention([intention('api', 'allow', 9), intention('web', 'deny', 9), intention('*', 'allow', 8)], web, off);
    expect(d).toMatchObject({ allowed: false, reason: 'Matched intention: DENY default/web => default/db (ID: id-web, Precedence: 9)' });
  });
  test('the source comparison is exact (case-sensitive)', () => {
    expect(decideIntention([intention('WEB', 'deny', 9)], web, off).allowed).toBe(true);
  });
  test('a wildcard source namespace covers every caller', () => {
    expect(decideIntention([intention('*', 'deny', 7, '*')], { namespace: 'other', name: 'x' }, off).allowed).toBe(false);
  });
  test.each([
    [{ aclsEnabled: false, defaultAllow: false }, true, 'ACLs disabled, access is allowed by default'],
    [{ aclsEnabled: true, defaultAllow: true }, true, 'Default behavior configured by ACLs'],
    [{ aclsEnabled: true, defaultAllow: false }, false, 'Default behavior configured by ACLs'],
  ])('no match with %j → %s (%s)', (defaults, allowed, reason) => {
    expect(decideIntention([intention('api', 'deny', 9)], web, defaults)).toEqual({ allowed, reason });
  });
});

describe('parseMatchEntry', () => {
  test('plain names are in the default namespace; ns/name splits; more slashes are refused', () => {
    expect(parseMatchEntry('web')).toEqual({ namespace: 'default', name: 'web' });
    expect(parseMatchEntry('ns1/web')).toEqual({ namespace: 'ns1', name: 'web' });
    expect(() => parseMatchEntry('a/b/c')).toThrow("input can contain at most one '/'");
  });
});

describe('SignLimiter', () => {
  test('a token bucket of one second worth of signings, refilled over time', () => {
    let now = 0;
    const l = new SignLimiter({ perSecond: 3, maxConcurrent: 0 }, () => now);
    const takes = () => [1, 2, 3, 4].map(() => l.tryAcquire() && (l.release(), true));
    expect(takes()).toEqual([true, true, true, false]);
    now += 340; // ~1 token
    expect(takes()).toEqual([true, false, false, false]);
    now += 10_000; // never more than the burst
    expect(takes()).toEqual([true, true, true, false]);
  });
  test('signings in flight are capped until released', () => {
    const l = new SignLimiter({ perSecond: 0, maxConcurrent: 2 });
    expect([l.tryAcquire(), l.tryAcquire(), l.tryAcquire()]).toEqual([true, true, false]);
    l.release();
    expect(l.tryAcquire()).toBe(true);
  });
});

describe('renewalTime', () => {
  test('between 60 % and 90 % of the leaf lifetime', () => {
    const leaf = { ValidAfter: '2024-01-01T00:00:00Z', ValidBefore: '2024-01-01T10:00:00Z' };
    const start = Date.parse(leaf.ValidAfter);
    expect(renewalTime(leaf, () => 0) - start).toBe(6 * 3600_000);
    expect(renewalTime(leaf, () => 1) - start).toBe(9 * 3600_000);
  });
});
