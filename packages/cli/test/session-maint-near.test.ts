// Flags not covered elsewhere, each as a real `registry` process against a dev agent:
// `kv put -acquire/-release -session`, `maint -enable/-disable -service` and `catalog nodes -near`.
import { http, startDevAgent, waitFor, type TestAgent } from '../../server/test/support/dev-agent';
import { cli } from './support/cli';

let t: TestAgent;
let env: Record<string, string>;
beforeAll(async () => {
  t = await startDevAgent();
  env = { REGISTRY_HTTP_ADDR: `127.0.0.1:${t.agent.httpPort}` };
});
afterAll(async () => {
  await t.stop();
});
const run = (...args: string[]) => cli(args, { env });
const session = async () => (await http(t.url, 'PUT', '/v1/session/create', { Name: 'cli-test', TTL: '60s' })).json.ID as string;

test('kv put -acquire takes a lock with a session, a second session is refused, -release frees it', async () => {
  const [s1, s2] = [await session(), await session()];
  expect(await run('kv', 'put', '-acquire', '-session', s1, 'locks/db', 'held by one')).toMatchObject({ code: 0, stdout: 'Success! Lock acquired on: locks/db\n' });
  const detailed = (await run('kv', 'get', '-detailed', 'locks/db')).stdout;
  expect(detailed).toMatch(new RegExp(`^Session {10}${s1}$`, 'm'));
  expect(detailed).toMatch(/^LockIndex {8}1$/m);
  expect(detailed).toMatch(/^Value {12}held by one$/m);

  expect(await run('kv', 'put', '-acquire', `-session=${s2}`, 'locks/db', 'two')).toMatchObject({ code: 1, stdout: '', stderr: 'Error! Did not acquire lock\n' });
  expect(await run('kv', 'put', '-release', `-session=${s2}`, 'locks/db')).toMatchObject({ code: 1, stderr: 'Error! Did not release lock\n' });
  expect((await run('kv', 'get', 'locks/db')).stdout).toBe('held by one\n');

  expect(await run('kv', 'put', '-release', '-session', s1, 'locks/db')).toMatchObject({ code: 0, stdout: 'Success! Lock released on: locks/db\n' });
  expect((await run('kv', 'get', '-detailed', 'locks/db')).stdout).toMatch(/^Session {10}-$/m);
  expect(await run('kv', 'put', '-acquire', '-session', s2, 'locks/db')).toMatchObject({ code: 0, stdout: 'Success! Lock acquired on: locks/db\n' });

  expect(await run('kv', 'put', '-acquire', 'locks/db')).toMatchObject({ code: 1, stderr: expect.stringMatching(/Missing -session/) });
  const bogus = await run('kv', 'put', '-acquire', '-session', '00000000-0000-4000-8000-000000000000', 'locks/other');
  expect(bogus.code).toBe(1);
  expect(bogus.stdout).toBe('');
});

test('maint -enable -service puts one service in maintenance, listed by maint and seen in health; -disable clears it', async () => {
  expect((await http(t.url, 'PUT', '/v1/agent/service/register', { Name: 'web', ID: 'web-1', Port: 80 })).status).toBe(200);
  expect(await run('maint', '-enable', '-service', 'web-1', '-reason', 'deploying')).toMatchObject({ code: 0, stdout: 'Service maintenance is now enabled for "web-1"\n' });
  expect((await run('maint')).stdout).toBe('Service:\n  ID:     web-1\n  Reason: deploying\n\n');
  const health = (await http(t.url, 'GET', '/v1/health/service/web')).json;
  expect(health[0].Checks).toEqual(expect.arrayContaining([expect.objectContaining({ CheckID: '_service_maintenance:web-1', Status: 'critical', Notes: 'deploying' })]));
  // Only the service: the node is not in maintenance.
  expect((await http(t.url, 'GET', `/v1/health/node/test-agent`)).json.map((c: { CheckID: string }) => c.CheckID)).not.toContain('_node_maintenance');
  expect((await http(t.url, 'GET', '/v1/health/service/web?passing')).json).toEqual([]);

  expect(await run('maint', '-disable', '-service', 'web-1')).toMatchObject({ code: 0, stdout: 'Service maintenance is now disabled for "web-1"\n' });
  expect((await run('maint')).stdout).toBe('');
  expect((await http(t.url, 'GET', '/v1/health/service/web?passing')).json).toHaveLength(1);

  const unknown = await run('maint', '-enable', '-service', 'no-such-service');
  expect(unknown).toMatchObject({ code: 1, stderr: expect.stringMatching(/^Error toggling maintenance mode: Unexpected response code: 404/) });
  expect(await run('maint', '-service', 'web-1')).toMatchObject({ code: 1, stderr: expect.stringMatching(/Service requires either -enable or -disable/) });
});

test('catalog nodes -near sorts by network coordinates from the given node; -near _agent is the agent', async () => {
  // Node names in alphabetical order are the reverse of their distance from z-origin.
  const vec = (x: number) => [x, 0, 0, 0, 0, 0, 0, 0];
  const nodes: Array<[string, number]> = [
    ['a-far', 0.3],
    ['b-mid', 0.1],
    ['c-near', 0.01],
    ['z-origin', 0],
  ];
  for (const [name, x] of nodes) {
    expect((await http(t.url, 'PUT', '/v1/catalog/register', { Node: name, Address: `10.2.0.${Math.round(x * 100) + 1}` })).status).toBe(200);
    expect((await http(t.url, 'PUT', '/v1/coordinate/update', { Node: name, Coord: { Vec: vec(x), Error: 0.1, Adjustment: 0, Height: 0.00001 } })).status).toBe(200);
  }
  await waitFor(async () => (await http(t.url, 'GET', '/v1/coordinate/nodes')).json.length >= 4, 10_000);
  const names = (r: { stdout: string }) => r.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[0]);

  const others = (list: string[]) => list.filter((n) => n !== 'test-agent');
  const plain = names(await run('catalog', 'nodes'));
  expect(others(plain)).toEqual(['a-far', 'b-mid', 'c-near', 'z-origin']);
  expect(others(names(await run('catalog', 'nodes', '-near', 'z-origin')))).toEqual(['z-origin', 'c-near', 'b-mid', 'a-far']);
  expect(others(names(await run('catalog', 'nodes', '-near=a-far')))).toEqual(['a-far', 'b-mid', 'c-near', 'z-origin']);
  expect(others(names(await run('catalog', 'nodes', '-near=b-mid')))).toEqual(['b-mid', 'c-near', 'z-origin', 'a-far']);

  // _agent is the queried agent's own node, which keeps its coordinate near the origin.
  const fromAgent = names(await run('catalog', 'nodes', '-near', '_agent'));
  expect(fromAgent[0]).toBe('test-agent');
  expect(others(fromAgent)).toEqual(['z-origin', 'c-near', 'b-mid', 'a-far']);
  expect(await run('catalog', 'nodes', '-near', 'test-agent')).toEqual(await run('catalog', 'nodes', '-near', '_agent'));
});
