import { createPrivateKey, X509Certificate } from 'node:crypto';
import fc from 'fast-check';
import {
  CertificateRequestError, createCSR, formatSerialNumber, generateRoot, parseSerialNumber, serviceURI, signLeaf,
  signLeafForService, type RootCA,
} from '@registry/ca';

const CLUSTER = '11111111-2222-3333-4444-555555555555';
const TD = `${CLUSTER}.registry`;
const NOW = new Date('2024-03-01T12:00:00.400Z');
const HOUR = 3_600_000;

// `openssl req -new -subj "/CN=legacy-client/O=Example" -addext "subjectAltName=DNS:api.example,URI:spiffe://<TD>/ns/default/dc/dc1/svc/api"`
const OPENSSL_CSR = `-----BEGIN CERTIFICATE REQUEST-----
MIIBYjCCAQcCAQAwKjEWMBQGA1UEAwwNbGVnYWN5LWNsaWVudDEQMA4GA1UECgwH
RXhhbXBsZTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABLImqkRRXn29ZO9Ffo5Z
9AbsQhlLrk3+RSg+ldW8YLTWdBWurkL10T1wIk8c+sRtsC5BUk3jkm9JnM55I6L7
t06gezB5BgkqhkiG9w0BCQ4xbDBqMGgGA1UdEQRhMF+CC2FwaS5leGFtcGxlhlBz
cGlmZmU6Ly8xMTExMTExMS0yMjIyLTMzMzMtNDQ0NC01NTU1NTU1NTU1NTUucmVn
aXN0cnkvbnMvZGVmYXVsdC9kYy9kYzEvc3ZjL2FwaTAKBggqhkjOPQQDAgNJADBG
AiEA5D+x7AtQvA3kao5tIBjB/QeXzK3uVWXX8SjrwNR6i9kCIQDVvIP5pNrrxUOB
401Uk2vCTaY8+c0I4+T8YVl5BO3ojQ==
-----END CERTIFICATE REQUEST-----
`;

let ecRoot: RootCA;
let rsaRoot: RootCA;
beforeAll(() => {
  ecRoot = generateRoot({ clusterId: CLUSTER, keyType: 'ec', serial: 1, now: NOW });
  rsaRoot = generateRoot({ clusterId: CLUSTER, keyType: 'rsa', serial: 1, now: NOW });
});

const rootCert = (root: RootCA) => new X509Certificate(root.RootCert);
const webCSR = () => createCSR({ uri: serviceURI(TD, 'dc1', 'web') });

/** Re-armour a PEM block after editing its DER in place. */
function tamperedPem(pem: string, label: string, edit: (der: Buffer) => void): string {
  const body = pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  const der = Buffer.from(body, 'base64');
  edit(der);
  return `-----BEGIN ${label}-----\n${der.toString('base64')}\n-----END ${label}-----\n`;
}

describe.each([['EC', () => ecRoot], ['RSA', () => rsaRoot]] as const)('a leaf signed by an %s root', (_name, root) => {
  test('verifies with the root\'s public key and names the root as issuer', () => {
    const leaf = signLeaf({ root: root(), csrPEM: webCSR().csrPEM, serial: 5, now: NOW });
    const cert = new X509Certificate(leaf.CertPEM);
    expect(cert.verify(rootCert(root()).publicKey)).toBe(true);
    expect(cert.checkIssued(rootCert(root()))).toBe(true);
  });

  test('is an end-entity certificate for the service, for both client and server auth', () => {
    const leaf = signLeaf({ root: root(), csrPEM: webCSR().csrPEM, serial: 5, now: NOW });
    const cert = new X509Certificate(leaf.CertPEM);
    expect(cert.ca).toBe(false);
    expect(cert.subject).toBe('CN=web');
    expect(cert.subjectAltName).toBe(`URI:spiffe://${TD}/ns/default/dc/dc1/svc/web`);
    expect([...(cert.keyUsage ?? [])].sort()).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    expect(leaf.Service).toBe('web');
    expect(leaf.ServiceURI).toBe(`spiffe://${TD}/ns/default/dc/dc1/svc/web`);
  });
});

describe('leaf validity', () => {
  test('starts one minute before now and lasts 72 hours by default', () => {
    const leaf = signLeaf({ root: ecRoot, csrPEM: webCSR().csrPEM, serial: 5, now: NOW });
    const cert = new X509Certificate(leaf.CertPEM);
    expect(leaf.ValidAfter).toBe('2024-03-01T11:59:00Z');
    expect(leaf.ValidBefore).toBe('2024-03-04T11:59:00Z');
    expect(new Date(cert.validFrom).toISOString()).toBe('2024-03-01T11:59:00.000Z');
    expect(new Date(cert.validTo).getTime() - new Date(cert.validFrom).getTime()).toBe(72 * HOUR);
  });

  test('honours a custom ttl', () => {
    const leaf = signLeaf({ root: ecRoot, csrPEM: webCSR().csrPEM, serial: 5, now: NOW, ttlHours: 1 });
    expect(new Date(leaf.ValidBefore).getTime() - new Date(leaf.ValidAfter).getTime()).toBe(HOUR);
  });

  test('defaults to the current time', () => {
    const before = Date.now();
    const leaf = signLeaf({ root: ecRoot, csrPEM: webCSR().csrPEM, serial: 5 });
    const validAfter = new Date(leaf.ValidAfter).getTime();
    expect(validAfter).toBeGreaterThanOrEqual(before - 61_000);
    expect(validAfter).toBeLessThanOrEqual(Date.now() - 59_000);
  });
});

describe('leaf serial numbers', () => {
  test('are the serial given, positive, in Consul\'s colon-hex form', () => {
    const cases: [number | bigint, string, string][] = [
      [8, '08', '08'],
      [0x80, '80', '80'], // top bit set: must still be a positive INTEGER
      [256, '01:00', '0100'],
      [0xffffffffffffffffn, 'ff:ff:ff:ff:ff:ff:ff:ff', 'FFFFFFFFFFFFFFFF'],
    ];
    for (const [serial, text, nodeHex] of cases) {
      const leaf = signLeaf({ root: ecRoot, csrPEM: webCSR().csrPEM, serial, now: NOW });
      expect(leaf.SerialNumber).toBe(text);
      expect(new X509Certificate(leaf.CertPEM).serialNumber).toBe(nodeHex);
    }
  });

  test('increasing serials give SerialNumber strings in the same numeric order', () => {
    const serials = [1, 2, 127, 128, 255, 256, 65535, 65536, 2 ** 40];
    const texts = serials.map((s) => signLeaf({ root: ecRoot, csrPEM: webCSR().csrPEM, serial: s, now: NOW }).SerialNumber);
    expect(texts.map(parseSerialNumber)).toEqual(serials.map(BigInt));
  });

  test('format and parse preserve order for any pair of positive serials', () => {
    const serial = fc.bigInt({ min: 1n, max: (1n << 64n) - 1n });
    fc.assert(fc.property(serial, serial, (a, b) => {
      const [pa, pb] = [parseSerialNumber(formatSerialNumber(a)), parseSerialNumber(formatSerialNumber(b))];
      expect(pa).toBe(a);
      expect(pa < pb).toBe(a < b);
    }));
  });

  test('zero and negative serials are refused', () => {
    expect(() => signLeaf({ root: ecRoot, csrPEM: webCSR().csrPEM, serial: 0 })).toThrow(RangeError);
    expect(() => signLeaf({ root: ecRoot, csrPEM: webCSR().csrPEM, serial: -3n })).toThrow(RangeError);
  });
});

describe('CSR checks', () => {
  test('a CSR from another trust domain is refused', () => {
    const { csrPEM } = createCSR({ uri: serviceURI('other.registry', 'dc1', 'web') });
    expect(() => signLeaf({ root: ecRoot, csrPEM, serial: 5 })).toThrow(
      new CertificateRequestError(`SPIFFE ID in CSR from a different trust domain: spiffe://other.registry/ns/default/dc/dc1/svc/web`),
    );
  });

  test('a CSR from another datacenter is refused when the datacenter is checked', () => {
    const { csrPEM } = createCSR({ uri: serviceURI(TD, 'dc2', 'web') });
    expect(() => signLeaf({ root: ecRoot, csrPEM, serial: 5, dc: 'dc1' })).toThrow(/different datacenter/);
    expect(signLeaf({ root: ecRoot, csrPEM, serial: 5, dc: 'dc2' }).Service).toBe('web');
  });

  test('a CSR whose signature bytes were altered is refused', () => {
    const csrPEM = tamperedPem(webCSR().csrPEM, 'CERTIFICATE REQUEST', (der) => { der[der.length - 1]! ^= 0x01; });
    expect(() => signLeaf({ root: ecRoot, csrPEM, serial: 5 })).toThrow(new CertificateRequestError('certificate signing request signature is invalid'));
  });

  test('a CSR whose SPIFFE ID was changed after signing is refused', () => {
    const csrPEM = tamperedPem(webCSR().csrPEM, 'CERTIFICATE REQUEST', (der) => {
      const at = der.indexOf('svc/web');
      expect(at).toBeGreaterThan(0);
      der.write('svc/wex', at, 'latin1');
    });
    expect(() => signLeaf({ root: ecRoot, csrPEM, serial: 5 })).toThrow(/signature is invalid/);
  });

  test('a CSR for an agent identity, a signing identity or a non-SPIFFE URI is refused', () => {
    for (const uri of [`spiffe://${TD}/agent/client/dc/dc1/id/n1`, `spiffe://${TD}`, 'https://example.com/web']) {
      const { csrPEM } = createCSR({ uri });
      expect(() => signLeaf({ root: ecRoot, csrPEM, serial: 5 })).toThrow(CertificateRequestError);
    }
  });

  test('text that is not a CSR is refused as a bad request', () => {
    expect(() => signLeaf({ root: ecRoot, csrPEM: 'hello', serial: 5 })).toThrow(CertificateRequestError);
    const truncated = tamperedPem(webCSR().csrPEM, 'CERTIFICATE REQUEST', (der) => { der[1] = 0x7f; });
    expect(() => signLeaf({ root: ecRoot, csrPEM: truncated, serial: 5 })).toThrow(CertificateRequestError);
  });

  test('a CSR written by another tool (OpenSSL: subject, DNS and URI SANs) is accepted; only its URI is copied', () => {
    const leaf = signLeaf({ root: ecRoot, csrPEM: OPENSSL_CSR, serial: 5 });
    const cert = new X509Certificate(leaf.CertPEM);
    expect(cert.subject).toBe('CN=api');
    expect(cert.subjectAltName).toBe(`URI:spiffe://${TD}/ns/default/dc/dc1/svc/api`);
    expect(cert.verify(rootCert(ecRoot).publicKey)).toBe(true);
  });

  test('a CSR with an RSA key is signed by an EC root', () => {
    const { csrPEM } = createCSR({ uri: serviceURI(TD, 'dc1', 'db'), keyType: 'rsa' });
    const cert = new X509Certificate(signLeaf({ root: ecRoot, csrPEM, serial: 9 }).CertPEM);
    expect(cert.publicKey.asymmetricKeyType).toBe('rsa');
    expect(cert.verify(rootCert(ecRoot).publicKey)).toBe(true);
  });

  test('requested DNS names are added beside the SPIFFE URI', () => {
    const leaf = signLeaf({ root: ecRoot, csrPEM: webCSR().csrPEM, serial: 5, dnsNames: ['web.service.registry'] });
    expect(new X509Certificate(leaf.CertPEM).subjectAltName).toBe(
      `DNS:web.service.registry, URI:spiffe://${TD}/ns/default/dc/dc1/svc/web`,
    );
  });

  test('a root whose private key does not match its certificate cannot sign', () => {
    const other = generateRoot({ clusterId: CLUSTER, serial: 2 });
    const mixed = { ...ecRoot, PrivateKey: other.PrivateKey };
    expect(() => signLeaf({ root: mixed, csrPEM: webCSR().csrPEM, serial: 5 })).toThrow(/does not belong/);
  });
});

describe('signLeafForService', () => {
  test('makes a fresh EC key for the service and returns it with a leaf that certifies it', () => {
    const a = signLeafForService({ root: ecRoot, service: 'api', dc: 'dc1', serial: 11 });
    const b = signLeafForService({ root: ecRoot, service: 'api', dc: 'dc1', serial: 12 });
    expect(a.PrivateKeyPEM).toContain('-----BEGIN EC PRIVATE KEY-----');
    expect(a.PrivateKeyPEM).not.toBe(b.PrivateKeyPEM);
    const cert = new X509Certificate(a.CertPEM);
    expect(cert.checkPrivateKey(createPrivateKey(a.PrivateKeyPEM))).toBe(true);
    expect(a.ServiceURI).toBe(`spiffe://${TD}/ns/default/dc/dc1/svc/api`);
    expect(a.SerialNumber).toBe('0b');
  });
});
