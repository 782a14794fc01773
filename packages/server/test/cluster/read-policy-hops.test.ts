// A read's policy is its endpoint's (endpoints/<area>-reads.ts) and is applied by whichever server
// runs it, so it holds the same through a follower and through a client agent, whose routes no
// longer decide it: the event list stays the agent's own (?dc is a 400), a session renew asked
// ?stale&index is checked with the leader's state and answered at once, and prepared-query reads
// do not block.
import { eventually } from '../support/wait';
import { ClientAgents } from './support/client-agents';
import { ClusterHarness, type HttpAnswer } from './support/cluster-harness';

jest.setTimeout(120_000);

let cluster: ClusterHarness;
let clients: ClientAgents;
let follower: number;

beforeAll(async () => {
  cluster = await ClusterHarness.start({ size: 3, extraArgs: ['-dns-port', '-1'] });
  const leader = await cluster.waitForLeader(20_000);
  follower = (leader + 1) % 3;
  clients = new ClientAgents(cluster.dir, cluster.servers.map((s) => s.serverAddress));
  await clients.start(1);
  const joined = await eventually(async () => (await clients.http(0, 'GET', '/v1/agent/self')).status === 200
    && (await cluster.http(leader, 'GET', '/v1/catalog/node/c0')).body.includes('"c0"'), 30_000, 200);
  if (!joined) throw new Error(`the client did not join\n${clients.diagnostics()}\n${cluster.diagnostics()}`);
});

afterAll(async () => {
  await clients?.stop();
  await cluster?.stop();
});

type Via = (method: string, path: string, body?: unknown) => Promise<HttpAnswer>;
const vias: Array<[string, () => Via]> = [
  ['a follower', () => (m, p, b) => cluster.http(follower, m, p, b, { timeoutMs: 10_000 })],
  ['a client agent', () => (m, p, b) => clients.http(0, m, p, b, 10_000)],
];

describe.each(vias)('through %s', (_name, viaOf) => {
  test('the event list is the agent’s own: ?dc is a 400 with its reason, without it the fired event is listed', async () => {
    const via = viaOf();
    expect((await via('PUT', '/v1/event/fire/hop-ev')).status).toBe(200);
    const other = await via('GET', '/v1/event/list?dc=elsewhere');
    expect(other.status).toBe(400);
    expect(other.body).toContain('dc is not supported');
    expect(await eventually(async () => (await via('GET', '/v1/event/list?consistent')).body.includes('hop-ev'), 10_000)).toBe(true);
  });

  test('a session renew asked ?stale&index is answered at once; an unknown session is a 404', async () => {
    const via = viaOf();
    const created = await via('PUT', '/v1/session/create', { TTL: '30s', Node: 'c0' });
    expect(created.status).toBe(200);
    const id = created.json<{ ID: string }>().ID;
    const index = Number((await via('GET', '/v1/session/list')).headers['x-registry-index']);
    const started = Date.now();
    const renewed = await via('PUT', `/v1/session/renew/${id}?stale&index=${index}&wait=5s`);
    expect(renewed.status).toBe(200);
    expect(renewed.json<Array<{ ID: string }>>()[0]!.ID).toBe(id);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect((await via('PUT', '/v1/session/renew/00000000-0000-0000-0000-000000000000?stale')).status).toBe(404);
  });

  test('a prepared-query list with ?index answers at once', async () => {
    const via = viaOf();
    const index = Number((await via('GET', '/v1/catalog/nodes')).headers['x-registry-index']);
    const started = Date.now();
    const r = await via('GET', `/v1/query?index=${index}&wait=5s`);
    expect(r.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});
