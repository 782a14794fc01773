// Client agents (issue 14): three real servers and five `registry agent` processes without -server
// on loopback. Clients join through -retry-join, heartbeat, own their services (anti-entropy),
// forward everything else to a live server, and are noticed by the servers when they die.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, sleep } from '../support/wait';
import { ClusterHarness } from './support/cluster-harness';
import { ClientAgents } from './support/client-agents';

jest.setTimeout(240_000);

/** Servers mark a client critical after this long without a heartbeat (config client_heartbeat_timeout). */
const HEARTBEAT_TIMEOUT_MS = 3_000;
/** The bound a test allows for that: the timeout, the leader's sweep, a Raft write and the test's polling. */
const DETECTION_BOUND_MS = HEARTBEAT_TIMEOUT_MS + 4_000;

const serverConfig = join(tmpdir(), `registry-client-agents-${process.pid}.json`);
let cluster: ClusterHarness;
let clients: ClientAgents;

interface Member { Name: string; Status: number; Tags: { role: string } }
interface Check { CheckID: string; Status: string }

beforeAll(async () => {
  // The servers' config: a short heartbeat timeout so the test stays short.
  writeFileSync(serverConfig, JSON.stringify({ client_heartbeat_timeout: `${HEARTBEAT_TIMEOUT_MS}ms` }));
  cluster = await ClusterHarness.start({ size: 3, extraArgs: ['-config-file', serverConfig, '-dns-port', '-1'] });
  await cluster.waitForLeader(20_000);
  clients = new ClientAgents(cluster.dir, cluster.servers.map((s) => s.serverAddress), { anti_entropy_interval: '1s' });
  await clients.start(5);
  const joined = await eventually(async () => {
    const members = await membersOn(0).catch(() => []);
    return members.filter((m) => m.Tags.role === 'node' && m.Status === 1).length === 5;
  }, 20_000, 200);
  if (!joined) throw new Error(`the five clients did not all join\n${clients.diagnostics()}\n${cluster.diagnostics()}`);
});

afterAll(async () => {
  await clients?.stop();
  await cluster?.stop();
  rmSync(serverConfig, { force: true });
});

async function membersOn(server: number): Promise<Member[]> {
  return (await cluster.http(server, 'GET', '/v1/agent/members')).json<Member[]>();
}

async function serfHealth(node: string): Promise<string | undefined> {
  const r = await cluster.http((await cluster.leader()) ?? 0, 'GET', `/v1/health/node/${node}`);
  return r.json<Check[]>().find((c) => c.CheckID === 'serfHealth')?.Status;
}

test('every client is a member with a passing serfHealth, listed the same by a server and by a client', async () => {
  for (const c of clients.clients) expect(await serfHealth(c.node)).toBe('passing');
  const fromClient = (await clients.http(1, 'GET', '/v1/agent/members')).json<Member[]>();
  const names = (ms: Member[]) => ms.map((m) => `${m.Name}:${m.Tags.role}:${m.Status}`).sort();
  expect(names(fromClient)).toEqual(names(await membersOn(0)));
  expect(fromClient.filter((m) => m.Tags.role === 'registry')).toHaveLength(3);
  const self = (await clients.http(1, 'GET', '/v1/agent/self')).json<{ Config: { Server: boolean } }>();
  expect(self.Config.Server).toBe(false);
});

test('KV and a blocking query through client agents', async () => {
  expect((await clients.http(0, 'PUT', '/v1/kv/fleet/a', 'one')).body).toBe('true');
  const first = await clients.http(1, 'GET', '/v1/kv/fleet/a?raw');
  expect(first.body).toBe('one');
  const index = Number(first.headers['x-registry-index']);
  expect(index).toBeGreaterThan(0);
  const started = Date.now();
  const blocked = clients.http(2, 'GET', `/v1/kv/fleet/a?index=${index}&wait=20s`, undefined, 30_000);
  await sleep(500);
  expect((await clients.http(3, 'PUT', '/v1/kv/fleet/a', 'two')).body).toBe('true');
  const woke = await blocked;
  expect(Date.now() - started).toBeLessThan(10_000); // woken by the write, not by the 20 s wait
  expect(Number(woke.headers['x-registry-index'])).toBeGreaterThan(index);
  expect(Buffer.from(woke.json<{ Value: string }[]>()[0]!.Value, 'base64').toString()).toBe('two');
});

test('anti-entropy: a service registered through a client survives a catalog-level deregister; a quiet sync writes nothing', async () => {
  const r = await clients.http(0, 'PUT', '/v1/agent/service/register', { Name: 'web', Port: 8080, Tags: ['v1'], Check: { TTL: '60s', Status: 'passing' } });
  expect(r.status).toBe(200);
  const instances = async () => (await cluster.http(0, 'GET', '/v1/catalog/service/web')).json<{ Node: string; ServiceTags: string[] }[]>();
  expect((await instances()).map((s) => s.Node)).toEqual(['c0']);
  expect((await cluster.http(0, 'PUT', '/v1/catalog/deregister', { Node: 'c0', ServiceID: 'web' })).body).toBe('true');
  expect(await instances()).toEqual([]);
  expect(await eventually(async () => (await instances()).length === 1, 10_000, 200)).toBe(true);
  // Its check came back too, with the status the agent holds.
  expect(await eventually(async () => (await cluster.http(0, 'GET', '/v1/health/checks/web')).json<Check[]>().some((c) => c.Status === 'passing'), 10_000, 200)).toBe(true);

  // A tag change made in the catalog is reverted, since the agent's definition says otherwise…
  await cluster.http(0, 'PUT', '/v1/catalog/register', { Node: 'c0', Address: '127.0.0.1', SkipNodeUpdate: true, Service: { ID: 'web', Service: 'web', Port: 8080, Tags: ['hacked'] } });
  expect(await eventually(async () => JSON.stringify((await instances())[0]?.ServiceTags) === '["v1"]', 10_000, 200)).toBe(true);

  // …unless the service has EnableTagOverride: then the catalog's tags stand.
  await clients.http(0, 'PUT', '/v1/agent/service/register', { Name: 'api', Port: 9090, Tags: ['own'], EnableTagOverride: true });
  await cluster.http(0, 'PUT', '/v1/catalog/register', { Node: 'c0', Address: '127.0.0.1', SkipNodeUpdate: true, Service: { ID: 'api', Service: 'api', Port: 9090, Tags: ['retagged'], EnableTagOverride: true } });
  await sleep(3_000); // three anti-entropy passes
  const api = (await cluster.http(0, 'GET', '/v1/catalog/service/api')).json<{ ServiceTags: string[] }[]>();
  expect(api[0]?.ServiceTags).toEqual(['retagged']);

  // A service registered in the catalog on the client's node, unknown to the agent, is removed.
  await cluster.http(0, 'PUT', '/v1/catalog/register', { Node: 'c0', Address: '127.0.0.1', SkipNodeUpdate: true, Service: { ID: 'stray', Service: 'stray', Port: 1 } });
  expect(await eventually(async () => (await cluster.http(0, 'GET', '/v1/catalog/service/stray')).json<unknown[]>().length === 0, 10_000, 200)).toBe(true);

  // Nothing changes now: passes go on and write nothing.
  await sleep(1_500);
  const stats = async () => (await clients.http(0, 'GET', '/v1/agent/self')).json<{ Stats: { antiEntropy: { passes: number; writes: number } } }>().Stats.antiEntropy;
  const before = await stats();
  await sleep(3_500);
  const after = await stats();
  expect(after.passes).toBeGreaterThanOrEqual(before.passes + 2);
  expect(after.writes).toBe(before.writes);
});

test('SIGKILL of a client: its serfHealth turns critical and its sessions are gone within the bound', async () => {
  const created = await clients.http(2, 'PUT', '/v1/session/create', { Name: 'lock-holder' });
  expect(created.status).toBe(200);
  const id = created.json<{ ID: string }>().ID;
  expect((await cluster.http(0, 'GET', `/v1/session/info/${id}`)).json<unknown[] | null>()).toHaveLength(1);
  expect((await clients.http(2, 'PUT', `/v1/kv/locks/leader?acquire=${id}`, 'c2')).body).toBe('true');

  const killedAt = Date.now();
  await clients.kill(2, 'SIGKILL');
  expect(await eventually(async () => (await serfHealth('c2')) === 'critical', DETECTION_BOUND_MS, 100)).toBe(true);
  expect(Date.now() - killedAt).toBeGreaterThanOrEqual(HEARTBEAT_TIMEOUT_MS - 1_000); // not marked before missing its heartbeats
  expect(await eventually(async () => (await cluster.http(0, 'GET', `/v1/session/info/${id}`)).json<unknown[] | null>() === null, 2_000, 100)).toBe(true);
  expect(Date.now() - killedAt).toBeLessThan(DETECTION_BOUND_MS + 2_000);
  // The lock is released with the session.
  const lock = (await cluster.http(0, 'GET', '/v1/kv/locks/leader')).json<{ Session?: string }[]>();
  expect(lock[0]?.Session).toBeUndefined();
  expect((await membersOn(1)).find((m) => m.Name === 'c2')?.Status).toBe(4);
  // The others stay alive.
  for (const n of ['c0', 'c1', 'c3', 'c4']) expect(await serfHealth(n)).toBe('passing');
});

test('a client survives the loss of the server it used: reads and writes keep working through another', async () => {
  const used = (await clients.http(3, 'GET', '/v1/agent/self')).json<{ Stats: { agent: { server: string } } }>().Stats.agent.server;
  const victim = cluster.servers.find((s) => s.serverAddress === used);
  expect(victim).toBeDefined();
  await cluster.kill(victim!.index, 'SIGKILL');
  try {
    const put = await clients.http(3, 'PUT', '/v1/kv/fleet/after-loss', 'still-here', 30_000);
    expect(put.body).toBe('true');
    expect((await clients.http(3, 'GET', '/v1/kv/fleet/after-loss?raw', undefined, 30_000)).body).toBe('still-here');
    const now = (await clients.http(3, 'GET', '/v1/agent/self')).json<{ Stats: { agent: { server: string } } }>().Stats.agent.server;
    expect(now).not.toBe(used);
    // Its heartbeats go on through another server: it is not marked failed.
    await sleep(HEARTBEAT_TIMEOUT_MS + 1_000);
    expect(await serfHealth('c3')).toBe('passing');
  } finally {
    await cluster.restart(victim!.index);
  }
  await cluster.waitForLeader(20_000);
});

test('leave on a client and force-leave of a failed one deregister their nodes; members lists them as left', async () => {
  expect((await clients.http(4, 'PUT', '/v1/agent/leave')).status).toBe(200);
  expect(await eventually(() => !clients.running(4), 10_000, 100)).toBe(true);
  const leader = (await cluster.leader()) ?? 0;
  expect((await cluster.http(leader, 'GET', '/v1/catalog/node/c4')).json()).toBeNull();
  expect((await cluster.http(leader, 'PUT', '/v1/agent/force-leave/c2')).status).toBe(200);
  expect((await cluster.http(leader, 'GET', '/v1/catalog/node/c2')).json()).toBeNull();
  const members = await membersOn(leader);
  expect(members.find((m) => m.Name === 'c4')?.Status).toBe(3);
  expect(members.find((m) => m.Name === 'c2')?.Status).toBe(3);
  expect(members.find((m) => m.Name === 'c0')?.Status).toBe(1);
});
