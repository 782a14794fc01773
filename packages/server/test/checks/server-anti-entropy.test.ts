// Anti-entropy on a server agent (issues #26 and #35: a catalog row of the agent's own node that it
// does not hold is reconciled, whatever the agent's role). A service of the agent deregistered
// through the catalog comes back at the next pass; a service registered through the catalog on the
// agent's node, which the agent does not hold, goes; the `registry` service the leader keeps for
// every server stays; and a pass that finds nothing different writes nothing.
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
const NODE = 'test-agent';
beforeAll(async () => {
  a = await startDevAgent((c) => {
    c.clients.antiEntropyIntervalMs = 300;
  });
  await waitFor(async () => (await http(a.url, 'GET', `/v1/catalog/node/${NODE}`)).json?.Services?.registry !== undefined, 20_000, 100);
});
afterAll(() => a.stop());

const services = async () => Object.keys(((await http(a.url, 'GET', `/v1/catalog/node/${NODE}`)).json?.Services ?? {}) as Record<string, unknown>).sort();

test('a pass over a catalog that matches writes nothing', async () => {
  expect((await http(a.url, 'PUT', '/v1/agent/service/register', { ID: 'web-1', Name: 'web', Port: 80, Check: { TTL: '60s' } })).status).toBe(200);
  await waitFor(async () => (await services()).includes('web-1'), 10_000, 100);
  const index = async () => Number((await fetch(`${a.url}/v1/catalog/node/${NODE}`)).headers.get('x-registry-index'));
  await new Promise((r) => setTimeout(r, 500));
  const before = await index();
  // Several passes at 300 ms.
  await new Promise((r) => setTimeout(r, 2_000));
  expect(await index()).toBe(before);
});

test("a server's own service deregistered through the catalog is registered again; a stray on its node is removed", async () => {
  // A pass every 300 ms may put it back before a read right after the deregister could see it gone,
  // so the proof that it went and came back is a new CreateIndex, not a read in between.
  const created = async () => ((await http(a.url, 'GET', `/v1/catalog/node/${NODE}`)).json?.Services?.['web-1']?.CreateIndex as number | undefined) ?? 0;
  const before = await created();
  expect(before).toBeGreaterThan(0);
  expect((await http(a.url, 'PUT', '/v1/catalog/deregister', { Node: NODE, ServiceID: 'web-1' })).status).toBe(200);
  await waitFor(async () => (await created()) > before, 10_000, 100);
  // With its check.
  await waitFor(async () => ((await http(a.url, 'GET', `/v1/health/node/${NODE}`)).json as { CheckID: string }[]).some((c) => c.CheckID === 'service:web-1'), 10_000, 100);

  expect((await http(a.url, 'PUT', '/v1/catalog/register', { Node: NODE, Address: '127.0.0.1', Service: { ID: 'stray', Service: 'stray', Port: 1 } })).status).toBe(200);
  await waitFor(async () => !(await services()).includes('stray'), 10_000, 100);
  // What is the leader's stays: the server service and serfHealth.
  expect(await services()).toEqual(['registry', 'web-1']);
  expect(((await http(a.url, 'GET', `/v1/health/node/${NODE}`)).json as { CheckID: string }[]).map((c) => c.CheckID).sort()).toEqual(['serfHealth', 'service:web-1']);
});
