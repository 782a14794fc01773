// Coordinate endpoints on one agent: the server publishes its own coordinate, clients update
// theirs, reads filter and refuse, and `near=_agent` / `near=<node>` sort by the stored coordinates.
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
const NODE = 'coord-agent';

/** An 8-dimensional coordinate `x` seconds along the first axis from the origin. */
const at = (x: number) => ({ Vec: [x, 0, 0, 0, 0, 0, 0, 0], Error: 0.2, Adjustment: 0, Height: 10e-6 });

beforeAll(async () => {
  a = await startDevAgent((c) => {
    c.nodeName = NODE;
  });
  for (const [node, x] of [['far', 0.08], ['near', 0.002], ['middle', 0.03]] as const) {
    await http(a.url, 'PUT', '/v1/catalog/register', { Node: node, Address: `10.0.0.${Math.round(x * 1000)}`, Service: { ID: 'api', Service: 'api' } });
    const r = await http(a.url, 'PUT', '/v1/coordinate/update', { Node: node, Segment: '', Coord: at(x) });
    if (r.status !== 200) throw new Error(`coordinate update: ${r.status} ${r.text}`);
  }
  await http(a.url, 'PUT', '/v1/catalog/register', { Node: 'nowhere', Address: '10.0.0.99', Service: { ID: 'api', Service: 'api' } });
  // The server writes its own coordinate once the leader has registered it.
  await waitFor(async () => (await http(a.url, 'GET', `/v1/coordinate/node/${NODE}`)).status === 200, 10_000);
}, 30_000);

afterAll(() => a.stop());

test('/v1/agent/self carries the agent\'s coordinate, the same one the catalog stores', async () => {
  const self = (await http(a.url, 'GET', '/v1/agent/self')).json;
  expect(self.Coord.Vec).toHaveLength(8);
  const stored = (await http(a.url, 'GET', `/v1/coordinate/node/${NODE}`)).json;
  expect(stored).toEqual([{ Node: NODE, Segment: '', Coord: self.Coord }]);
});

test('coordinate/nodes lists every node with a coordinate, by name, with an index', async () => {
  const r = await http(a.url, 'GET', '/v1/coordinate/nodes');
  expect(r.json.map((c: any) => c.Node)).toEqual([NODE, 'far', 'middle', 'near']);
  expect(r.json.find((c: any) => c.Node === 'near').Coord).toEqual(at(0.002));
  expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(0);
});

test('an unknown node, or a node without a coordinate, is 404', async () => {
  expect((await http(a.url, 'GET', '/v1/coordinate/node/ghost')).status).toBe(404);
  expect((await http(a.url, 'GET', '/v1/coordinate/node/nowhere')).status).toBe(404);
});

test('updates with a missing node, no coordinate or the wrong dimensionality are refused', async () => {
  expect((await http(a.url, 'PUT', '/v1/coordinate/update', { Coord: at(1) })).status).toBe(400);
  expect((await http(a.url, 'PUT', '/v1/coordinate/update', { Node: 'far' })).status).toBe(400);
  const flat = await http(a.url, 'PUT', '/v1/coordinate/update', { Node: 'far', Coord: { Vec: [1, 2], Error: 1, Adjustment: 0, Height: 0 } });
  expect(flat.status).toBe(400);
  expect(flat.text).toContain('dimensions');
});

test('near=<node> and near=_agent sort by estimated RTT, nodes without coordinates last', async () => {
  const byNear = await http(a.url, 'GET', '/v1/catalog/nodes?near=far');
  expect(byNear.json.map((n: any) => n.Node)).toEqual(['far', 'middle', 'near', NODE, 'nowhere']);
  const byAgent = await http(a.url, 'GET', '/v1/catalog/nodes?near=_agent');
  expect(byAgent.json.map((n: any) => n.Node)).toEqual([NODE, 'near', 'middle', 'far', 'nowhere']);
  const health = await http(a.url, 'GET', '/v1/health/service/api?near=_agent');
  expect(health.json.map((e: any) => e.Node.Node)).toEqual(['near', 'middle', 'far', 'nowhere']);
});

test('a blocking coordinate read wakes on an update', async () => {
  const first = await http(a.url, 'GET', '/v1/coordinate/nodes');
  const index = first.headers.get('x-registry-index');
  const blocked = http(a.url, 'GET', `/v1/coordinate/nodes?index=${index}&wait=5s`);
  await new Promise((r) => setTimeout(r, 100));
  await http(a.url, 'PUT', '/v1/coordinate/update', { Node: 'near', Coord: at(0.001) });
  const woke = await blocked;
  expect(woke.json.find((c: any) => c.Node === 'near').Coord.Vec[0]).toBe(0.001);
});

test('coordinate/datacenters has this datacenter with its server', async () => {
  const r = await http(a.url, 'GET', '/v1/coordinate/datacenters');
  expect(r.json).toEqual([{ Datacenter: 'dc1', AreaID: 'WAN', Coordinates: [{ Node: `${NODE}.dc1`, Coord: expect.objectContaining({ Vec: expect.any(Array) }) }] }]);
});
