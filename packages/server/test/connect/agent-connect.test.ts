import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

async function caReady(a: TestAgent, token?: string): Promise<string> {
  const headers = token ? { 'X-Registry-Token': token } : undefined;
  await waitFor(async () => (await http(a.url, 'GET', '/v1/connect/ca/roots', undefined, headers)).json?.ActiveRootID !== '', 10_000);
  return (await http(a.url, 'GET', '/v1/connect/ca/roots', undefined, headers)).json.TrustDomain;
}

const uri = (td: string, svc: string) => `spiffe://${td}/ns/default/dc/dc1/svc/${svc}`;

describe('authorize (ACLs off)', () => {
  let a: TestAgent;
  let td: string;
  beforeAll(async () => {
    a = await startDevAgent();
    td = await caReady(a);
  });
  afterAll(() => a.stop());
  const authorize = (body: unknown) => http(a.url, 'POST', '/v1/agent/connect/authorize', body);

  test.each([
    [undefined, 'Request decode failed: EOF'],
    [{ ClientCertURI: 'spiffe://x.registry/ns/default/dc/dc1/svc/web', ClientCertSerial: '01' }, 'Target service must be specified'],
    [{ Target: 'db', ClientCertSerial: '01' }, 'ClientCertURI must be specified'],
    [{ Target: 'db', ClientCertURI: 'spiffe://x.registry/ns/default/dc/dc1/svc/web' }, 'ClientCertSerial must be specified'],
    [{ Target: 'db', ClientCertURI: 'not a uri', ClientCertSerial: '01' }, 'ClientCertURI not a valid Connect identifier'],
    [{ Target: 'db', ClientCertURI: 'spiffe://x.registry/ns/default/svc/web', ClientCertSerial: '01' }, 'ClientCertURI not a valid Connect identifier'],
    [{ Target: 'db', ClientCertURI: 'spiffe://x.registry', ClientCertSerial: '01' }, 'ClientCertURI not a valid Service identifier'],
  ])('%j is 400: %s', async (body, message) => {
    const r = await authorize(body);
    expect(r.status).toBe(400);
    expect(r.text).toBe(message);
  });

  test('GET is 405: authorize is POST only', async () => {
    expect((await http(a.url, 'GET', '/v1/agent/connect/authorize')).status).toBe(405);
  });

  test('without intentions the ACL default decides, and the answer comes from the cache', async () => {
    const body = { Target: 'nothing', ClientCertURI: uri(td, 'web'), ClientCertSerial: '01' };
    const first = await authorize(body);
    expect(first.json).toEqual({ Authorized: true, Reason: 'ACLs disabled, access is allowed by default' });
    expect(first.headers.get('x-cache')).toBe('MISS');
    const second = await authorize(body);
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(second.json).toEqual(first.json);
  });

  test('a matching intention decides, and a new intention reaches the cached answer', async () => {
    const body = { Target: 'db', ClientCertURI: uri(td, 'web'), ClientCertSerial: '01' };
    expect((await authorize(body)).json.Authorized).toBe(true);
    const id = (await http(a.url, 'POST', '/v1/connect/intentions', { SourceName: 'web', DestinationName: 'db', Action: 'deny' })).json.ID;
    await waitFor(async () => (await authorize(body)).json.Authorized === false, 5_000);
    const r = await authorize(body);
    expect(r.headers.get('x-cache')).toBe('HIT');
    expect(r.json.Reason).toBe(`Matched intention: DENY default/web => default/db (ID: ${id}, Precedence: 9)`);
    await http(a.url, 'POST', '/v1/connect/intentions', { SourceName: '*', DestinationName: 'db', Action: 'allow' });
    const api = { ...body, ClientCertURI: uri(td, 'api') };
    await waitFor(async () => (await authorize(api)).json.Authorized === true, 5_000);
    expect((await authorize(api)).json.Reason).toMatch(/^Matched intention: ALLOW default\/\* => default\/db \(ID: .+, Precedence: 8\)$/);
  });

  test('an identity from another trust domain is refused', async () => {
    const r = await authorize({ Target: 'db', ClientCertURI: uri('other.registry', 'api'), ClientCertSerial: '01' });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ Authorized: false, Reason: 'Identity from an external trust domain: other.registry' });
  });
});

describe('leaf signing is rate limited', () => {
  let a: TestAgent;
  beforeAll(async () => {
    a = await startDevAgent((c) => {
      c.connect.csrMaxPerSecond = 2;
    });
    await caReady(a);
  });
  afterAll(() => a.stop());

  test('beyond csr_max_per_second the agent answers 429 rate limited', async () => {
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => http(a.url, 'GET', `/v1/agent/connect/ca/leaf/svc${i}`)));
    const statuses = replies.map((r) => r.status);
    expect(statuses).toContain(200);
    expect(statuses).toContain(429);
    expect(replies.find((r) => r.status === 429)!.text).toBe('rate limited');
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
  });
});

describe('connect disabled', () => {
  let a: TestAgent;
  beforeAll(async () => {
    a = await startDevAgent((c) => {
      c.connect.enabled = false;
    });
  });
  afterAll(() => a.stop());

  test.each(['/v1/connect/ca/roots', '/v1/agent/connect/ca/roots', '/v1/agent/connect/ca/leaf/web', '/v1/connect/ca/configuration'])('GET %s is 500', async (path) => {
    const r = await http(a.url, 'GET', path);
    expect(r.status).toBe(500);
    expect(r.text).toBe('Connect must be enabled in order to use this endpoint');
  });
});

describe('with ACLs on (default deny)', () => {
  let a: TestAgent;
  let td: string;
  const root = { 'X-Registry-Token': 'root' };
  beforeAll(async () => {
    a = await startDevAgent((c) => {
      c.acl.enabled = true;
      c.acl.defaultPolicy = 'deny';
      c.acl.tokens.initialManagement = 'root';
      // startDevAgent waits for a catalog read; the agent's default token lets it in, then goes.
      c.acl.tokens.default = 'root';
    });
    a.agent.config.acl.tokens.default = undefined;
    await waitFor(async () => (await http(a.url, 'GET', '/v1/connect/intentions', undefined, root)).status === 200, 10_000);
    td = await caReady(a, 'root');
  });
  afterAll(() => a.stop());

  test('anonymous callers may not authorize, fetch leaves, write intentions or read the CA configuration', async () => {
    const body = { Target: 'db', ClientCertURI: uri(td, 'web'), ClientCertSerial: '01' };
    expect((await http(a.url, 'POST', '/v1/agent/connect/authorize', body)).status).toBe(403);
    expect((await http(a.url, 'GET', '/v1/agent/connect/ca/leaf/web')).status).toBe(403);
    expect((await http(a.url, 'POST', '/v1/connect/intentions', { SourceName: 'a', DestinationName: 'b', Action: 'allow' })).status).toBe(403);
    expect((await http(a.url, 'GET', '/v1/connect/ca/configuration')).status).toBe(403);
    expect((await http(a.url, 'PUT', '/v1/connect/ca/configuration', { Config: { LeafCertTTL: '24h' } })).status).toBe(403);
    // Roots need no ACL.
    expect((await http(a.url, 'GET', '/v1/agent/connect/ca/roots')).status).toBe(200);
  });

  test('without a matching intention the default policy denies', async () => {
    const body = { Target: 'db', ClientCertURI: uri(td, 'web'), ClientCertSerial: '01' };
    const r = await http(a.url, 'POST', '/v1/agent/connect/authorize', body, root);
    expect(r.json).toEqual({ Authorized: false, Reason: 'Default behavior configured by ACLs' });
    const check = await http(a.url, 'GET', '/v1/connect/intentions/check?source=web&destination=db', undefined, root);
    expect(check.json).toEqual({ Allowed: false });
  });

  test('intention reads are filtered by intentions:read on the destination', async () => {
    const mk = async (d: string) => (await http(a.url, 'POST', '/v1/connect/intentions', { SourceName: 'web', DestinationName: d, Action: 'allow' }, root)).json.ID;
    await mk('db');
    const cacheId = await mk('cache');
    const policy = await http(a.url, 'PUT', '/v1/acl/policy', { Name: 'db-only', Rules: 'service "db" { policy = "read" }' }, root);
    expect(policy.status).toBe(200);
    const token = await http(a.url, 'PUT', '/v1/acl/token', { Policies: [{ ID: policy.json.ID }] }, root);
    const mine = { 'X-Registry-Token': token.json.SecretID };
    const list = await http(a.url, 'GET', '/v1/connect/intentions', undefined, mine);
    expect(list.json.map((i: any) => i.DestinationName)).toEqual(['db']);
    expect((await http(a.url, 'GET', `/v1/connect/intentions/${cacheId}`, undefined, mine)).status).toBe(403);
    expect((await http(a.url, 'GET', '/v1/connect/intentions/match?by=destination&name=cache', undefined, mine)).status).toBe(403);
    expect((await http(a.url, 'GET', '/v1/connect/intentions/match?by=destination&name=db', undefined, mine)).status).toBe(200);
    // Read rights are not write rights.
    expect((await http(a.url, 'POST', '/v1/connect/intentions', { SourceName: 'x', DestinationName: 'db', Action: 'allow' }, mine)).status).toBe(403);
  });
});
