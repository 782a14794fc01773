// Thousands of random and malformed requests to every route: no 5xx other than the documented
// ones, the server stays up, and the catalog stays consistent (every check's and service's node
// exists; indexes never go backwards).
import fc from 'fast-check';
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

jest.setTimeout(120_000);

let t: TestAgent;
beforeAll(async () => {
  t = await startDevAgent();
});
afterAll(async () => {
  await t.stop();
});

const ROUTES: [string, string][] = [
  ['PUT', '/v1/catalog/register'],
  ['PUT', '/v1/catalog/deregister'],
  ['GET', '/v1/catalog/datacenters'],
  ['GET', '/v1/catalog/nodes'],
  ['GET', '/v1/catalog/services'],
  ['GET', '/v1/catalog/service/{name}'],
  ['GET', '/v1/catalog/connect/{name}'],
  ['GET', '/v1/catalog/node/{name}'],
  ['GET', '/v1/health/node/{name}'],
  ['GET', '/v1/health/checks/{name}'],
  ['GET', '/v1/health/service/{name}'],
  ['GET', '/v1/health/connect/{name}'],
  ['GET', '/v1/health/state/{name}'],
  ['GET', '/v1/status/leader'],
  ['GET', '/v1/status/peers'],
  ['GET', '/v1/operator/raft/configuration'],
  ['GET', '/v1/agent/self'],
  ['GET', '/v1/agent/members'],
];

/** 500s the spec allows: a datacenter we cannot reach. */
const DOCUMENTED_500 = /^No path to datacenter$/;

const name = fc.oneof(fc.constantFrom('web', 'db', 'n1', 'n2', 'any', 'critical', ''), fc.string({ maxLength: 12 }));
const queryValue = fc.oneof(fc.constantFrom('', '1', '-1', '10s', 'abc', 'true', 'env:prod', '_agent', 'dc1', 'dc9'), fc.string({ maxLength: 8 }));
const queryKey = fc.constantFrom('index', 'wait', 'stale', 'consistent', 'cached', 'dc', 'tag', 'node-meta', 'near', 'passing', 'pretty', 'token', 'max_stale', 'x');
const query = fc.array(fc.tuple(queryKey, queryValue), { maxLength: 4 });

const registerish = fc.record(
  {
    Node: fc.constantFrom('n1', 'n2', 'n3', '', 'N1'),
    Address: fc.oneof(fc.constantFrom('10.0.0.1', ''), fc.integer()),
    ID: fc.oneof(fc.constant(undefined), fc.uuid(), fc.constant('bad-id')),
    SkipNodeUpdate: fc.boolean(),
    NodeMeta: fc.oneof(fc.constant(undefined), fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }))),
    Service: fc.oneof(
      fc.constant(undefined),
      fc.record(
        {
          ID: fc.constantFrom('web', 'web-2', 'db', ''),
          Service: fc.constantFrom('web', 'db', ''),
          Port: fc.oneof(fc.integer({ min: -5, max: 70000 }), fc.constant('80')),
          Tags: fc.oneof(fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }), fc.constant(null)),
          Address: fc.constantFrom('', '0.0.0.0', '10.1.1.1'),
          Kind: fc.constantFrom('', 'connect-proxy', 'weird'),
          Meta: fc.oneof(fc.constant(undefined), fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }))),
        },
        { requiredKeys: [] },
      ),
    ),
    Check: fc.oneof(
      fc.constant(undefined),
      fc.record(
        {
          CheckID: fc.constantFrom('c1', 'c2', ''),
          Name: fc.constantFrom('c1', 'check', ''),
          Status: fc.constantFrom('passing', 'warning', 'critical', 'bogus'),
          ServiceID: fc.constantFrom('', 'web', 'missing'),
          Node: fc.constantFrom('n1', 'n2', ''),
        },
        { requiredKeys: [] },
      ),
    ),
    CheckID: fc.constantFrom(undefined, 'c1', 'c2'),
    ServiceID: fc.constantFrom(undefined, 'web', 'db'),
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  registerish.map((b) => JSON.stringify(b)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 40 }),
  fc.constant(''),
);

const request = fc.record({
  route: fc.constantFrom(...ROUTES),
  method: fc.oneof(fc.constant(null), fc.constantFrom('GET', 'PUT', 'POST', 'DELETE')),
  name,
  query,
  body,
});

test('random requests never crash the server or corrupt the catalog', async () => {
  const seen: string[] = [];
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const method = r.method ?? r.route[0];
      const path = r.route[1].replace('{name}', encodeURIComponent(r.name));
      // Never block in the fuzz run: a random index would otherwise wait minutes.
      const params = r.query.filter(([k]) => k !== 'wait').map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
      params.push('wait=1ms');
      const res = await http(t.url, method, `${path}?${params.join('&')}`, method === 'GET' ? undefined : r.body);
      if (res.status >= 500 && !DOCUMENTED_500.test(res.text)) {
        seen.push(`${method} ${path}?${params.join('&')} body=${r.body} → ${res.status} ${res.text}`);
      }
      return res.status >= 500 ? DOCUMENTED_500.test(res.text) : true;
    }),
    { numRuns: 2_000, seed: Number(process.env.FUZZ_SEED ?? 4242) },
  ).catch((err) => {
    throw new Error(`${(err as Error).message}\n${seen.slice(0, 5).join('\n')}`);
  });

  // Still up, and the catalog is consistent.
  const leader = await http(t.url, 'GET', '/v1/status/leader');
  expect(leader.status).toBe(200);
  expect(t.agent.store.checkInvariants()).toEqual([]);
  const nodes = new Set((await http(t.url, 'GET', '/v1/catalog/nodes')).json.map((n: any) => n.Node));
  for (const c of (await http(t.url, 'GET', '/v1/health/state/any')).json) expect(nodes.has(c.Node)).toBe(true);
});

test('indexes seen by a client never go backwards across random writes', async () => {
  let last = 0;
  await fc.assert(
    fc.asyncProperty(registerish, async (b) => {
      await http(t.url, 'PUT', '/v1/catalog/register', b);
      const r = await http(t.url, 'GET', '/v1/catalog/nodes');
      const index = Number(r.headers.get('x-registry-index'));
      const ok = index >= last;
      last = index;
      return ok;
    }),
    { numRuns: 300, seed: 7 },
  );
});
