// Issue 15 part 3: three places where registry answered short of its own spec.
// - GET /v1/session/node/<node ID> answers the node's sessions, as by name;
// - cached answers (/v1/agent/connect/ca/roots, ?cached reads, the leaf) carry
//   X-Registry-KnownLeader / X-Registry-LastContact like uncached reads;
// - with translate_wan_addrs on, every response carries X-Registry-Translate-Addresses: true.
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

describe('session/node by name or ID; cached reads carry the leader headers', () => {
  let a: TestAgent;
  beforeAll(async () => {
    a = await startDevAgent();
  });
  afterAll(() => a.stop());

  test('GET /v1/session/node/<ID> answers the sessions of the node with that ID', async () => {
    const id = 'b0b0b0b0-1111-4222-8333-444455556666';
    expect((await http(a.url, 'PUT', '/v1/catalog/register', { Node: 'holder', ID: id, Address: '10.0.0.9' })).status).toBe(200);
    const s = (await http(a.url, 'PUT', '/v1/session/create', { Node: 'holder', Checks: [] })).json.ID;
    const byName = await http(a.url, 'GET', '/v1/session/node/holder');
    const byId = await http(a.url, 'GET', `/v1/session/node/${id}`);
    expect(byName.json.map((x: any) => x.ID)).toEqual([s]);
    expect(byId.status).toBe(200);
    expect(byId.json).toEqual(byName.json);
    expect(byId.headers.get('x-registry-index')).toBeTruthy();
    // An ID no node has is still an empty list, as an unknown name.
    expect((await http(a.url, 'GET', '/v1/session/node/b0b0b0b0-1111-4222-8333-000000000000')).json).toEqual([]);
  });

  const leaderHeaders = (r: { headers: Headers }) => [r.headers.get('x-registry-knownleader'), r.headers.get('x-registry-lastcontact')];

  test('/v1/agent/connect/ca/roots carries KnownLeader and LastContact (MISS and HIT)', async () => {
    await waitFor(async () => (await http(a.url, 'GET', '/v1/connect/ca/roots')).json?.ActiveRootID, 10_000);
    const first = await http(a.url, 'GET', '/v1/agent/connect/ca/roots');
    const second = await http(a.url, 'GET', '/v1/agent/connect/ca/roots');
    expect(second.headers.get('x-cache')).toBe('HIT');
    for (const r of [first, second]) {
      expect(r.status).toBe(200);
      expect(leaderHeaders(r)).toEqual(['true', '0']);
      expect(r.headers.get('x-registry-index')).toBeTruthy();
    }
  });

  test.each(['/v1/catalog/service/web', '/v1/health/service/web', '/v1/health/connect/web'])('%s?cached carries KnownLeader and LastContact', async (path) => {
    await http(a.url, 'PUT', '/v1/catalog/register', { Node: 'n1', Address: '10.0.0.1', Service: { Service: 'web', Port: 80 } });
    const miss = await http(a.url, 'GET', `${path}?cached`);
    const hit = await http(a.url, 'GET', `${path}?cached`);
    expect([miss.headers.get('x-cache'), hit.headers.get('x-cache')]).toEqual(['MISS', 'HIT']);
    expect(leaderHeaders(miss)).toEqual(['true', '0']);
    expect(leaderHeaders(hit)).toEqual(['true', '0']);
  });

  test('the agent leaf carries them too', async () => {
    const r = await http(a.url, 'GET', '/v1/agent/connect/ca/leaf/web');
    expect(r.status).toBe(200);
    expect(leaderHeaders(r)).toEqual(['true', '0']);
  });
});

describe('translate_wan_addrs: the header on every response', () => {
  let a: TestAgent;
  beforeAll(async () => {
    a = await startDevAgent((c) => {
      c.translateWanAddrs = true;
    });
  });
  afterAll(() => a.stop());

  test('reads, writes, errors, unknown routes and wrong verbs all carry X-Registry-Translate-Addresses: true', async () => {
    const answers = [
      await http(a.url, 'GET', '/v1/catalog/nodes'),
      await http(a.url, 'PUT', '/v1/kv/k', 'v'),
      await http(a.url, 'GET', '/v1/kv/absent'),
      await http(a.url, 'GET', '/v1/session/info/'),
      await http(a.url, 'GET', '/v1/no/such/route'),
      await http(a.url, 'DELETE', '/v1/catalog/nodes'),
      // Through the Express path (a Content-Encoding the direct path leaves to body-parser).
      await http(a.url, 'GET', '/v1/catalog/nodes', undefined, { 'Content-Encoding': 'gzip' }),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 404, 400, 404, 405, 200]);
    for (const r of answers) expect(r.headers.get('x-registry-translate-addresses')).toBe('true');
    // Only the registry name: X-Consul-* copies are consul_compat's.
    for (const r of answers) expect(r.headers.get('x-consul-translate-addresses')).toBeNull();
    // Local addresses are not translated: only the header is on every answer.
    await http(a.url, 'PUT', '/v1/catalog/register', { Node: 'local-wan', Address: '10.0.0.8', TaggedAddresses: { wan: '198.51.100.8' } });
    const nodes = (await http(a.url, 'GET', '/v1/catalog/nodes')).json;
    expect(nodes.find((n: any) => n.Node === 'local-wan').Address).toBe('10.0.0.8');
  });

  test('without the setting the header is absent', async () => {
    const off = await startDevAgent();
    try {
      const r = await http(off.url, 'GET', '/v1/catalog/nodes');
      expect(r.headers.get('x-registry-translate-addresses')).toBeNull();
    } finally {
      await off.stop();
    }
  });
});
