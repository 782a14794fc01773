import { X509Certificate } from 'node:crypto';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
beforeAll(async () => {
  a = await startDevAgent();
  await waitFor(async () => (await http(a.url, 'GET', '/v1/connect/ca/roots')).json?.ActiveRootID !== '', 10_000);
});
afterAll(async () => {
  await a.stop();
});

function certs(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((p) => new X509Certificate(p));
}

function serialOf(leaf: { SerialNumber: string }): bigint {
  return BigInt('0x' + leaf.SerialNumber.replace(/:/g, ''));
}

describe('CA roots', () => {
  test('the leader initialises the CA: one active EC root, trust domain <uuid>.registry, no private key', async () => {
    const r = await http(a.url, 'GET', '/v1/connect/ca/roots');
    expect(r.status).toBe(200);
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(0);
    expect(r.json.TrustDomain).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.registry$/);
    expect(r.json.Roots).toHaveLength(1);
    const root = r.json.Roots[0];
    expect(r.json.ActiveRootID).toBe(root.ID);
    expect(Object.keys(root).sort()).toEqual(
      ['ID', 'Name', 'SerialNumber', 'SigningKeyID', 'ExternalTrustDomain', 'NotBefore', 'NotAfter', 'RootCert', 'IntermediateCerts', 'Active', 'CreateIndex', 'ModifyIndex'].sort(),
    );
    expect(root).toMatchObject({ Name: 'Registry CA Root Cert', Active: true, IntermediateCerts: null, ExternalTrustDomain: r.json.TrustDomain });
    expect(r.text).not.toContain('PRIVATE KEY');
    const cert = new X509Certificate(root.RootCert);
    expect(cert.ca).toBe(true);
    expect(cert.publicKey.asymmetricKeyType).toBe('ec');
    expect(cert.subjectAltName).toBe(`URI:spiffe://${r.json.TrustDomain}`);
    expect(cert.fingerprint.toLowerCase()).toBe(root.ID);
  });

  test('the agent endpoint answers the same from its cache: MISS, then HIT with Age', async () => {
    const direct = (await http(a.url, 'GET', '/v1/connect/ca/roots')).json;
    const first = await http(a.url, 'GET', '/v1/agent/connect/ca/roots');
    const second = await http(a.url, 'GET', '/v1/agent/connect/ca/roots');
    expect(first.json).toEqual(direct);
    expect([first.headers.get('x-cache'), second.headers.get('x-cache')]).toEqual(['MISS', 'HIT']);
    expect(second.headers.get('age')).toBe('0');
    expect(second.headers.get('x-registry-index')).toBe(first.headers.get('x-registry-index'));
  });
});

describe('CA configuration', () => {
  test('GET shows the provider and its settings, never the cluster id', async () => {
    const r = await http(a.url, 'GET', '/v1/connect/ca/configuration');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ Provider: 'registry', Config: { LeafCertTTL: '72h', RotationPeriod: '2160h' } });
    const td = (await http(a.url, 'GET', '/v1/connect/ca/roots')).json.TrustDomain as string;
    expect(r.text).not.toContain(td.split('.')[0]);
  });

  test.each([
    [{ Provider: 'vault' }, 'could not initialize provider'],
    [{ Config: { LeafCertTTL: '10m' } }, 'LeafCertTTL must be at least 1h'],
    [{ Config: { LeafCertTTL: '9000h' } }, 'LeafCertTTL must be less than 8760h'],
    [{ Config: { PrivateKeyType: 'dsa' } }, 'unknown PrivateKeyType'],
    [{ Config: { PrivateKeyType: 'ec', PrivateKeyBits: 512 } }, 'EC keys must be 256 or 384 bits'],
    [{ Config: { PrivateKey: '-----BEGIN EC PRIVATE KEY-----' } }, 'cannot be set'],
  ])('PUT %j is 400 (%s)', async (body, message) => {
    const r = await http(a.url, 'PUT', '/v1/connect/ca/configuration', body);
    expect(r.status).toBe(400);
    expect(r.text).toContain(message);
  });

  test('PUT with the same settings changes nothing; a new LeafCertTTL is stored without rotating', async () => {
    const before = await http(a.url, 'GET', '/v1/connect/ca/configuration');
    const roots = (await http(a.url, 'GET', '/v1/connect/ca/roots')).json;
    expect((await http(a.url, 'PUT', '/v1/connect/ca/configuration', { Provider: 'registry', Config: { LeafCertTTL: '72h' } })).status).toBe(200);
    expect((await http(a.url, 'GET', '/v1/connect/ca/configuration')).json.ModifyIndex).toBe(before.json.ModifyIndex);
    const put = await http(a.url, 'PUT', '/v1/connect/ca/configuration', { Provider: 'registry', Config: { LeafCertTTL: '48h' } });
    expect(put.status).toBe(200);
    expect(put.text).toBe('');
    expect((await http(a.url, 'GET', '/v1/connect/ca/configuration')).json.Config.LeafCertTTL).toBe('48h');
    expect((await http(a.url, 'GET', '/v1/connect/ca/roots')).json.ActiveRootID).toBe(roots.ActiveRootID);
    await http(a.url, 'PUT', '/v1/connect/ca/configuration', { Provider: 'registry', Config: { LeafCertTTL: '72h' } });
  });
});

describe('leaf certificates and rotation', () => {
  test('a leaf verifies against the root: chain, SPIFFE URI SAN, 72 h validity, CN; MISS then HIT', async () => {
    const roots = (await http(a.url, 'GET', '/v1/connect/ca/roots')).json;
    const first = await http(a.url, 'GET', '/v1/agent/connect/ca/leaf/web');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-cache')).toBe('MISS');
    const leaf = first.json;
    expect(Number(first.headers.get('x-registry-index'))).toBe(leaf.ModifyIndex);
    expect(leaf.CreateIndex).toBe(leaf.ModifyIndex);
    expect(leaf.Service).toBe('web');
    expect(leaf.ServiceURI).toBe(`spiffe://${roots.TrustDomain}/ns/default/dc/dc1/svc/web`);
    expect(leaf.PrivateKeyPEM).toContain('-----BEGIN EC PRIVATE KEY-----');

    const [cert] = certs(leaf.CertPEM);
    const root = new X509Certificate(roots.Roots[0].RootCert);
    expect(cert!.checkIssued(root)).toBe(true);
    expect(cert!.verify(root.publicKey)).toBe(true);
    expect(cert!.ca).toBe(false);
    expect(cert!.subjectAltName).toBe(`URI:${leaf.ServiceURI}`);
    expect(cert!.subject).toBe('CN=web');
    expect(cert!.checkPrivateKey(require('node:crypto').createPrivateKey(leaf.PrivateKeyPEM))).toBe(true);
    const from = Date.parse(cert!.validFrom);
    const to = Date.parse(cert!.validTo);
    expect(to - from).toBe(72 * 3600_000);
    expect(Math.abs(from - (Date.now() - 60_000))).toBeLessThan(10_000);
    expect(serialOf(leaf)).toBe(BigInt('0x' + cert!.serialNumber));

    const second = await http(a.url, 'GET', '/v1/agent/connect/ca/leaf/web');
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(second.json).toEqual(leaf);
  });

  test('serial numbers increase across leaves', async () => {
    const serials: bigint[] = [];
    for (const s of ['s1', 's2', 's3', 's4']) serials.push(serialOf((await http(a.url, 'GET', `/v1/agent/connect/ca/leaf/${s}`)).json));
    for (let i = 1; i < serials.length; i++) expect(serials[i]! > serials[i - 1]!).toBe(true);
  });

  test('rotation: new active root cross-signed by the old; blocked leaf requests get a new leaf and key that chain to both roots', async () => {
    const before = (await http(a.url, 'GET', '/v1/connect/ca/roots')).json;
    const oldRoot = new X509Certificate(before.Roots[0].RootCert);
    const leaf1 = await http(a.url, 'GET', '/v1/agent/connect/ca/leaf/api');
    const idx = leaf1.headers.get('x-registry-index');
    const rootsIdx = (await http(a.url, 'GET', '/v1/agent/connect/ca/roots')).headers.get('x-registry-index');

    const blockedLeaf = http(a.url, 'GET', `/v1/agent/connect/ca/leaf/api?index=${idx}&wait=20s`);
    const blockedRoots = http(a.url, 'GET', `/v1/agent/connect/ca/roots?index=${rootsIdx}&wait=20s`);
    await new Promise((r) => setTimeout(r, 100));
    const put = await http(a.url, 'PUT', '/v1/connect/ca/configuration', { Provider: 'registry', Config: { PrivateKeyType: 'ec', PrivateKeyBits: 384 } });
    expect(put.status).toBe(200);

    const after = (await http(a.url, 'GET', '/v1/connect/ca/roots')).json;
    expect(after.TrustDomain).toBe(before.TrustDomain);
    expect(after.ActiveRootID).not.toBe(before.ActiveRootID);
    expect(after.Roots.map((r: any) => [r.ID, r.Active])).toEqual([[after.ActiveRootID, true], [before.ActiveRootID, false]]);
    const newRootEntry = after.Roots[0];
    const newRoot = new X509Certificate(newRootEntry.RootCert);
    expect(newRootEntry.IntermediateCerts).toHaveLength(1);
    const bridge = new X509Certificate(newRootEntry.IntermediateCerts[0]);
    expect(bridge.checkIssued(oldRoot) && bridge.verify(oldRoot.publicKey)).toBe(true);
    expect(bridge.publicKey.export({ format: 'der', type: 'spki' })).toEqual(newRoot.publicKey.export({ format: 'der', type: 'spki' }));

    const roots = await blockedRoots;
    expect(roots.json.ActiveRootID).toBe(after.ActiveRootID);

    const leaf2 = await blockedLeaf;
    expect(leaf2.status).toBe(200);
    expect(leaf2.json.ModifyIndex).toBeGreaterThan(leaf1.json.ModifyIndex);
    expect(leaf2.json.PrivateKeyPEM).not.toBe(leaf1.json.PrivateKeyPEM);
    expect(serialOf(leaf2.json) > serialOf(leaf1.json)).toBe(true);
    const [cert, intermediate] = certs(leaf2.json.CertPEM);
    expect(cert!.verify(newRoot.publicKey)).toBe(true);
    expect(cert!.subjectAltName).toBe(`URI:spiffe://${after.TrustDomain}/ns/default/dc/dc1/svc/api`);
    // A peer that only knows the old root still builds leaf → cross-signed → old root.
    expect(intermediate!.verify(oldRoot.publicKey)).toBe(true);
    expect(cert!.verify(intermediate!.publicKey)).toBe(true);
    // The old leaf still verifies against the (inactive, still listed) old root.
    expect(certs(leaf1.json.CertPEM)[0]!.verify(oldRoot.publicKey)).toBe(true);
  });
});
