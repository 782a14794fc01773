// A token used through a client agent the moment it is made: the client's server may not have
// applied it yet. The client asks that server as Consul's client does (stale), and a token unknown
// there is asked about again in default mode, which waits for the leader's commit index, so it
// works at once instead of being refused as "ACL not found" and that refusal kept for token_ttl
// (client/token-fetch.ts). On a follower itself, a read resolves its token after catching up
// (rpc.ts runner()), and any other request with a token unknown there catches up first
// (acl/store-resolver.ts prepare()): a request is answered the same on every server.
// Three ACL-enabled servers with a proxy on each link; the client knows only one follower, and
// what the leader sends that follower arrives late. The election timeout is raised to 5 s so that
// the pause when the delay starts does not make that follower stand for election.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterHarness, HttpAnswer } from '../cluster/support/cluster-harness';
import type { ClientAgents } from '../cluster/support/client-agents';
import { startAclCluster, startJoinedClient, stopAclCluster } from './acl-cluster';

jest.setTimeout(180_000);

const MASTER = 'c1d2e3f4-0000-4000-8000-00000000bbbb';
const LAG_MS = 600;
const serverConfig = join(tmpdir(), `registry-acl-fresh-token-${process.pid}.json`);
let cluster: ClusterHarness;
let clients: ClientAgents;
let leader = 0;
let follower = 0;

const master = (method: string, path: string, body?: unknown): Promise<HttpAnswer> =>
  cluster.http(leader, method, path, body, { headers: { 'X-Registry-Token': MASTER }, timeoutMs: 10_000 });

async function tokenFor(rules: string): Promise<string> {
  const p = await master('PUT', '/v1/acl/policy', { Name: `p-${Math.random().toString(36).slice(2)}`, Rules: rules });
  if (p.status !== 200) throw new Error(`policy: ${p.status} ${p.body}`);
  const t = await master('PUT', '/v1/acl/token', { Policies: [{ ID: p.json<{ ID: string }>().ID }] });
  if (t.status !== 200) throw new Error(`token: ${t.status} ${t.body}`);
  return t.json<{ SecretID: string }>().SecretID;
}

beforeAll(async () => {
  ({ cluster, leader } = await startAclCluster(serverConfig, MASTER, { proxied: true, raft: { election_ticks: 100 } }));
  follower = (leader + 1) % 3;
  const agentToken = await tokenFor('node_prefix "" { policy = "write" }\nservice_prefix "" { policy = "write" }');
  // Only the follower: a client keeps using the server it reached while that one answers.
  clients = await startJoinedClient(cluster, leader, MASTER, [cluster.servers[follower]!.serverAddress], {
    acl: { enabled: true, default_policy: 'deny', down_policy: 'extend-cache', token_ttl: '30s', tokens: { agent: agentToken } },
  });
});

afterAll(() => stopAclCluster(clients, cluster, serverConfig));

/** Runs `steps` while what the leader sends the follower arrives LAG_MS late. */
async function whileFollowerLags(steps: () => Promise<void>): Promise<void> {
  cluster.link(leader, follower).delay(LAG_MS);
  try {
    await steps();
  } finally {
    cluster.heal();
  }
}

/** The follower does not have `secret` yet: asked directly (stale), it does not know it. */
async function expectUnknownOnFollower(secret: string): Promise<void> {
  const there = await cluster.http(follower, 'GET', '/v1/acl/token/self?stale', undefined, { headers: { 'X-Registry-Token': secret } });
  expect([there.status, there.body.trim()]).toEqual([403, 'ACL not found']);
}

test("a token made on the leader works at once through a client whose server has not applied it yet; an unknown one is still 'ACL not found'", async () => {
  await whileFollowerLags(async () => {
    const fresh = await tokenFor('agent_prefix "" { policy = "read" }');
    // The client's server does not have it yet.
    await expectUnknownOnFollower(fresh);

    const viaClient = await clients.http(0, 'GET', `/v1/agent/self?token=${fresh}`, undefined, 20_000);
    expect(viaClient.status).toBe(200);
    expect(viaClient.json<{ Config: { NodeName: string } }>().Config.NodeName).toBe('c0');

    const unknown = await clients.http(0, 'GET', '/v1/agent/self?token=00000000-1111-4222-8333-444444444444', undefined, 20_000);
    expect([unknown.status, unknown.body.trim()]).toEqual([403, 'ACL not found']);
  });
});

test('on a lagging follower, a token made a moment ago on the leader is honoured: default and consistent reads, its agent endpoints, writes', async () => {
  expect((await master('PUT', '/v1/kv/app/fresh', 'yes')).status).toBe(200);
  await whileFollowerLags(async () => {
    const fresh = await tokenFor('key_prefix "app/" { policy = "read" }');
    const stale = await cluster.http(follower, 'GET', '/v1/kv/app/fresh?raw&stale', undefined, { headers: { 'X-Registry-Token': fresh } });
    expect([stale.status, stale.body.trim()]).toEqual([403, 'ACL not found']);
    // Default mode: everything the leader had committed when the read came, the token included.
    const read = await cluster.http(follower, 'GET', '/v1/kv/app/fresh?raw', undefined, { headers: { 'X-Registry-Token': fresh }, timeoutMs: 20_000 });
    expect([read.status, read.body]).toEqual([200, 'yes']);
    const consistent = await cluster.http(follower, 'GET', '/v1/kv/app/fresh?raw&consistent', undefined, { headers: { 'X-Registry-Token': fresh }, timeoutMs: 20_000 });
    expect([consistent.status, consistent.body]).toEqual([200, 'yes']);
    // An agent endpoint of the follower itself, checked against the follower's own tables.
    const reader = await tokenFor('agent_prefix "" { policy = "read" }');
    const self = await cluster.http(follower, 'GET', '/v1/agent/self', undefined, { headers: { 'X-Registry-Token': reader }, timeoutMs: 20_000 });
    expect(self.status).toBe(200);
    // A write through the follower is the leader's to check, and the leader has the token.
    const writer = await tokenFor('key_prefix "app/" { policy = "write" }');
    const written = await cluster.http(follower, 'PUT', '/v1/kv/app/written', 'ok', { headers: { 'X-Registry-Token': writer }, timeoutMs: 20_000 });
    expect([written.status, written.body]).toEqual([200, 'true']);
  });
});

// Last: it moves the leadership.
test('a leader call through the client (transfer-leader) with a token made a moment ago is checked and run, not refused by the lagging server', async () => {
  await whileFollowerLags(async () => {
    const operator = await tokenFor('operator = "write"');
    await expectUnknownOnFollower(operator);
    const moved = await clients.http(0, 'POST', `/v1/operator/raft/transfer-leader?token=${operator}`, undefined, 30_000);
    expect([moved.status, moved.body.slice(0, 200)]).toEqual([200, expect.anything()]);
  });
  await cluster.waitForLeader(20_000);
  expect(await cluster.leader()).not.toBe(leader);
});
