// The HTTP layer written once: errors, pretty output, index headers, blocking queries,
// consistency modes, datacenter handling — seen through HTTP only.
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

let t: TestAgent;
beforeAll(async () => {
  t = await startDevAgent();
});
afterAll(async () => {
  await t.stop();
});

const register = (body: unknown) => http(t.url, 'PUT', '/v1/catalog/register', body);

describe('errors', () => {
  test('an unknown route is 404 with a plain-text reason', async () => {
    const r = await http(t.url, 'GET', '/v1/nope');
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toMatch(/text\/plain/);
    expect(r.text).toMatch(/not found/i);
  });

  test('a verb the route does not answer is 405 with an Allow header', async () => {
    const r = await http(t.url, 'DELETE', '/v1/catalog/nodes');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('OPTIONS,GET');
    expect(r.text).toBe('method DELETE not allowed');
  });

  test('OPTIONS lists the verbs', async () => {
    const r = await http(t.url, 'OPTIONS', '/v1/catalog/register');
    expect(r.status).toBe(200);
    expect(r.headers.get('allow')).toBe('OPTIONS,PUT');
  });

  test('unparseable JSON is 400 and writes nothing', async () => {
    const before = await http(t.url, 'GET', '/v1/catalog/nodes');
    const r = await http(t.url, 'PUT', '/v1/catalog/register', '{"Node": "x", ');
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/^Request decode failed/);
    const after = await http(t.url, 'GET', '/v1/catalog/nodes');
    expect(after.json).toEqual(before.json);
  });

  test('missing Node or Address is 400 with the reason, and writes nothing', async () => {
    const a = await register({ Address: '10.0.0.1' });
    expect(a.status).toBe(400);
    expect(a.text).toBe('Must provide node');
    const b = await register({ Node: 'no-address' });
    expect(b.status).toBe(400);
    expect(b.text).toBe('Must provide address if SkipNodeUpdate is not set');
    const nodes = await http(t.url, 'GET', '/v1/catalog/nodes');
    expect(nodes.json.map((n: any) => n.Node)).not.toContain('no-address');
  });

  test('a field of the wrong type is 400 naming the field', async () => {
    const r = await register({ Node: 'n', Address: 'a', Service: { Service: 'web', Port: 'eighty' } });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/Service\.Port/);
  });

  test('an unknown datacenter is 500 "No path to datacenter"', async () => {
    const r = await http(t.url, 'GET', '/v1/catalog/nodes?dc=elsewhere');
    expect(r.status).toBe(500);
    expect(r.text).toBe('No path to datacenter');
    const local = await http(t.url, 'GET', '/v1/catalog/nodes?dc=dc1');
    expect(local.status).toBe(200);
  });

  test('bad index or wait is 400', async () => {
    expect((await http(t.url, 'GET', '/v1/catalog/nodes?index=abc')).status).toBe(400);
    expect((await http(t.url, 'GET', '/v1/catalog/nodes?index=-1')).status).toBe(400);
    const w = await http(t.url, 'GET', '/v1/catalog/nodes?index=1&wait=10');
    expect(w.status).toBe(400);
    expect(w.text).toBe('Invalid wait time');
  });

  test('stale with consistent is 400', async () => {
    const r = await http(t.url, 'GET', '/v1/catalog/nodes?stale&consistent');
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/Cannot specify \?stale with \?consistent/);
  });
});

describe('output', () => {
  test('JSON is minimised by default and indented with ?pretty', async () => {
    const plain = await http(t.url, 'GET', '/v1/catalog/datacenters');
    expect(plain.text).toBe('["dc1"]');
    expect(plain.headers.get('content-type')).toMatch(/application\/json/);
    const pretty = await http(t.url, 'GET', '/v1/catalog/datacenters?pretty');
    expect(pretty.text).toBe('[\n    "dc1"\n]\n');
  });

  test('field names are accepted in any case (Consul decodes case-insensitively)', async () => {
    const r = await register({ node: 'lower-case', address: '10.1.1.1', service: { service: 'lc', port: 1 } });
    expect(r.status).toBe(200);
    const svc = await http(t.url, 'GET', '/v1/catalog/service/lc');
    expect(svc.json[0].ServicePort).toBe(1);
  });

  test('reads carry X-Registry-Index (never 0), KnownLeader and LastContact', async () => {
    const r = await http(t.url, 'GET', '/v1/catalog/service/never-registered');
    expect(r.status).toBe(200);
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThanOrEqual(1);
    expect(r.headers.get('x-registry-knownleader')).toBe('true');
    expect(r.headers.get('x-registry-lastcontact')).toBe('0');
  });
});

describe('consistency modes', () => {
  test.each(['', '?stale', '?consistent'])('mode %s answers with the registered node', async (mode) => {
    await register({ Node: 'cm-node', Address: '10.2.2.2' });
    const r = await http(t.url, 'GET', `/v1/catalog/nodes${mode}`);
    expect(r.status).toBe(200);
    expect(r.json.map((n: any) => n.Node)).toContain('cm-node');
    expect(r.headers.get('x-registry-knownleader')).toBe('true');
  });
});

describe('blocking queries', () => {
  test('a blocked read returns when what it watches changes, with a higher index', async () => {
    await register({ Node: 'bq-node', Address: '10.3.3.3', Service: { Service: 'bq-web', Port: 80 } });
    const first = await http(t.url, 'GET', '/v1/health/service/bq-web');
    const index = Number(first.headers.get('x-registry-index'));
    const started = Date.now();
    const blocked = http(t.url, 'GET', `/v1/health/service/bq-web?index=${index}&wait=20s`);
    await new Promise((r) => setTimeout(r, 200));
    await register({ Node: 'bq-node-2', Address: '10.3.3.4', Service: { Service: 'bq-web', Port: 81 } });
    const r = await blocked;
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(index);
    expect(r.json).toHaveLength(2);
  });

  test('a blocked read times out after wait with the same index', async () => {
    const first = await http(t.url, 'GET', '/v1/catalog/service/timeout-svc');
    const index = Number(first.headers.get('x-registry-index'));
    const started = Date.now();
    const r = await http(t.url, 'GET', `/v1/catalog/service/timeout-svc?index=${index}&wait=300ms`);
    const took = Date.now() - started;
    expect(r.status).toBe(200);
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(5_000);
    expect(Number(r.headers.get('x-registry-index'))).toBe(index);
  });

  test('a write to service db neither wakes nor moves the index of a watcher of web', async () => {
    await register({ Node: 'iso-node', Address: '10.4.4.4', Service: { Service: 'iso-web', Port: 80 } });
    const first = await http(t.url, 'GET', '/v1/health/service/iso-web');
    const index = Number(first.headers.get('x-registry-index'));
    const started = Date.now();
    const blocked = http(t.url, 'GET', `/v1/health/service/iso-web?index=${index}&wait=1500ms`);
    await new Promise((r) => setTimeout(r, 100));
    await register({ Node: 'other-node', Address: '10.4.4.5', Service: { Service: 'iso-db', Port: 5432 } });
    const r = await blocked;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(Number(r.headers.get('x-registry-index'))).toBe(index);
  });

  test('an index ahead of the store answers at once', async () => {
    const started = Date.now();
    const r = await http(t.url, 'GET', '/v1/catalog/nodes?index=999999999&wait=30s');
    expect(r.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
