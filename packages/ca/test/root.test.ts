import { createPublicKey, X509Certificate } from 'node:crypto';
import { DEFAULT_ROOT_TTL_HOURS, generateRoot, ROOT_NAME, rootTrustDomain, type KeyType, type RootCA } from '@registry/ca';

const CLUSTER = '11111111-2222-3333-4444-555555555555';
const NOW = new Date('2024-03-01T12:00:00.750Z');
const HOUR = 3_600_000;

// RSA key generation takes a few hundred ms; make each key type's root once.
const roots = new Map<KeyType, RootCA>();
beforeAll(() => {
  for (const keyType of ['ec', 'rsa'] as const) roots.set(keyType, generateRoot({ clusterId: CLUSTER, keyType, serial: 7, now: NOW }));
});

describe.each(['ec', 'rsa'] as const)('a generated %s root', (keyType) => {
  const root = () => roots.get(keyType)!;
  const cert = () => new X509Certificate(root().RootCert);

  test('is self-signed: it verifies with its own public key and issued itself', () => {
    expect(cert().verify(cert().publicKey)).toBe(true);
    expect(cert().checkIssued(cert())).toBe(true);
  });

  test('is a CA certificate named after its serial', () => {
    expect(cert().ca).toBe(true);
    expect(cert().subject).toBe('CN=Registry CA 7');
    expect(cert().issuer).toBe('CN=Registry CA 7');
    expect(cert().serialNumber).toBe('07');
  });

  test('carries the trust domain as its only SAN, a spiffe URI', () => {
    expect(cert().subjectAltName).toBe(`URI:spiffe://${CLUSTER}.registry`);
    expect(rootTrustDomain(root())).toBe(`${CLUSTER}.registry`);
  });

  test('is valid for ten years from a minute before now, and says so in whole-second ISO strings', () => {
    const notBefore = new Date(cert().validFrom).getTime();
    const notAfter = new Date(cert().validTo).getTime();
    expect(notBefore).toBe(new Date('2024-03-01T11:59:00Z').getTime());
    expect(notAfter - notBefore).toBe(DEFAULT_ROOT_TTL_HOURS * HOUR);
    expect(root().NotBefore).toBe('2024-03-01T11:59:00Z');
    expect(new Date(root().NotAfter).getTime()).toBe(notAfter);
  });

  test('uses the requested key type, with a private key in Consul\'s PEM form that matches the certificate', () => {
    expect(cert().publicKey.asymmetricKeyType).toBe(keyType);
    if (keyType === 'ec') {
      expect(cert().publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
      expect(root().PrivateKey).toContain('-----BEGIN EC PRIVATE KEY-----');
    } else {
      expect(cert().publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
      expect(root().PrivateKey).toContain('-----BEGIN RSA PRIVATE KEY-----');
    }
    const fromPrivate = createPublicKey(root().PrivateKey).export({ type: 'spki', format: 'der' });
    expect(fromPrivate.equals(cert().publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
  });

  test('has Consul\'s CARoot fields: fingerprint ID, name, numeric serial, colon-hex signing key id', () => {
    expect(root().ID).toBe(cert().fingerprint.toLowerCase());
    expect(root().Name).toBe(ROOT_NAME);
    expect(root().SerialNumber).toBe(7);
    expect(root().SigningKeyID).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){19}$/);
    expect(root().IntermediateCerts).toBeNull();
  });
});

describe('root generation options', () => {
  test('the default key type is EC P-256', () => {
    const root = generateRoot({ clusterId: CLUSTER, serial: 1 });
    expect(new X509Certificate(root.RootCert).publicKey.asymmetricKeyType).toBe('ec');
  });

  test('an explicit trust domain and ttl are honoured', () => {
    const root = generateRoot({ clusterId: CLUSTER, trustDomain: 'other.registry', serial: 2, ttlHours: 24, now: NOW });
    const cert = new X509Certificate(root.RootCert);
    expect(cert.subjectAltName).toBe('URI:spiffe://other.registry');
    expect(new Date(cert.validTo).getTime() - new Date(cert.validFrom).getTime()).toBe(24 * HOUR);
  });

  test('two roots have different keys, IDs and signing key ids', () => {
    const a = generateRoot({ clusterId: CLUSTER, serial: 1, now: NOW });
    const b = generateRoot({ clusterId: CLUSTER, serial: 1, now: NOW });
    expect(a.ID).not.toBe(b.ID);
    expect(a.SigningKeyID).not.toBe(b.SigningKeyID);
  });

  test('a root valid beyond 2049 (GeneralizedTime, RFC 5280) reads back with the right end date', () => {
    const root = generateRoot({ clusterId: CLUSTER, serial: 3, now: new Date('2045-06-01T00:00:00Z') });
    const cert = new X509Certificate(root.RootCert);
    expect(new Date(cert.validTo).getTime()).toBe(new Date(root.NotAfter).getTime());
    expect(root.NotAfter.startsWith('2055-')).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
  });

  test('EC P-384 is available on request', () => {
    const root = generateRoot({ clusterId: CLUSTER, serial: 1, keyBits: 384 });
    expect(new X509Certificate(root.RootCert).publicKey.asymmetricKeyDetails?.namedCurve).toBe('secp384r1');
  });

  test.each([0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1])('serial %p is refused (serials are positive integers)', (serial) => {
    expect(() => generateRoot({ clusterId: CLUSTER, serial })).toThrow(RangeError);
  });

  test('unsupported key sizes are refused', () => {
    expect(() => generateRoot({ clusterId: CLUSTER, serial: 1, keyType: 'ec', keyBits: 521 })).toThrow(RangeError);
    expect(() => generateRoot({ clusterId: CLUSTER, serial: 1, keyType: 'rsa', keyBits: 1024 })).toThrow(RangeError);
  });
});
