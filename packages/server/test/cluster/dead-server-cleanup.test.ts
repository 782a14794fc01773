// Autopilot's CleanupDeadServers (Consul's default true; issue #25/#35): a server that died for good
// and was replaced by a new server with a new name on a new host used to stay a fourth voter until
// an operator ran force-leave or remove-peer. The leader now removes a failed server once removing
// it leaves a majority of the voters (Consul: failed < voters/2) — in a cluster of three that is
// when the replacement joins. With CleanupDeadServers=false the dead server stays, as in Consul.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../support/ports';
import { spawnAgent, type AgentProcess } from '../support/processes';
import { eventually, sleep } from '../support/wait';
import { ClusterHarness } from './support/cluster-harness';

// ~55 s on a quiet machine; the bounds below allow for process starts of 30 s on a loaded one.
jest.setTimeout(300_000);

let cluster: ClusterHarness | undefined;
const extras: AgentProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const a of extras) {
    if (a.child.exitCode === null && a.child.signalCode === null) {
      a.child.kill('SIGKILL');
      await a.exited;
    }
  }
  await cluster?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface RaftConfiguration {
  Servers: { ID: string; Node: string; Address: string; Voter: boolean }[];
}

/** A new server (new name, empty data dir) that joins the given servers through -retry-join. */
async function newServer(node: string, retryJoin: string[]): Promise<{ agent: AgentProcess; address: string }> {
  const dir = mkdtempSync(join(tmpdir(), `registry-${node}-`));
  dirs.push(dir);
  const [httpPort, serverPort] = await freePorts(2);
  const agent = spawnAgent(
    ['-server', '-node', node, '-data-dir', join(dir, 'data'), '-bind', '127.0.0.1', '-client', '127.0.0.1', ...retryJoin.flatMap((a) => ['-retry-join', a])],
    httpPort!, serverPort!, join(dir, 'agent.log'),
  );
  extras.push(agent);
  return { agent, address: `127.0.0.1:${serverPort}` };
}

test('a dead server is removed when a new one replaces it (CleanupDeadServers); with it off the dead one stays', async () => {
  const c = (cluster = await ClusterHarness.start({ size: 3 }));
  const leader = await c.waitForLeader(60_000);
  const conf = async (): Promise<RaftConfiguration['Servers']> => {
    const l = await c.waitForLeader(20_000);
    return (await c.http(l, 'GET', '/v1/operator/raft/configuration', undefined, { timeoutMs: 3_000 })).json<RaftConfiguration>().Servers;
  };
  const voterNodes = async () => (await conf()).filter((s) => s.Voter).map((s) => s.Node).sort();
  const ap = (await c.http(leader, 'GET', '/v1/operator/autopilot/configuration')).json<{ CleanupDeadServers: boolean }>();
  expect(ap.CleanupDeadServers).toBe(true);

  // One follower dies for good. Three voters, one dead: removing it would leave no margin, so it stays.
  const dead = (leader + 1) % 3;
  const live = [0, 1, 2].filter((i) => i !== dead);
  await c.kill(dead, 'SIGKILL');
  await sleep(8_000);
  expect(await voterNodes()).toEqual(['s0', 's1', 's2']);

  // Its replacement: a new name, a new address, an empty data dir. Four voters, one dead → it goes.
  await newServer('n3', live.map((i) => c.servers[i].serverAddress));
  const replaced = await eventually(async () => JSON.stringify(await voterNodes()) === JSON.stringify([...live.map((i) => `s${i}`), 'n3'].sort()), 90_000, 250);
  if (!replaced) throw new Error(`voters: ${JSON.stringify(await conf())}\n${c.diagnostics(40)}`);
  expect(c.logs(await c.waitForLeader(20_000))).toMatch(/autopilot: removing a failed server/);

  // CleanupDeadServers off: the next dead server stays beside its replacement (four voters).
  const off = await c.http(leader, 'PUT', '/v1/operator/autopilot/configuration', { CleanupDeadServers: false, LastContactThreshold: '200ms', MaxTrailingLogs: 250, ServerStabilizationTime: '10s' });
  expect(off.status).toBe(200);
  const n3 = extras[0]!;
  n3.child.kill('SIGKILL');
  await n3.exited;
  await newServer('n4', live.map((i) => c.servers[i].serverAddress));
  const added = await eventually(async () => (await voterNodes()).includes('n4'), 90_000, 250);
  if (!added) throw new Error(`n4 is no voter: ${JSON.stringify(await conf())}\n${c.diagnostics(60)}\n--- n4\n${readFileSync(join(dirs[1]!, 'agent.log'), 'utf8').split('\n').filter((l) => !/DEBUG/.test(l)).slice(-60).join('\n')}`);
  await sleep(10_000);
  expect(await voterNodes()).toEqual([...live.map((i) => `s${i}`), 'n3', 'n4'].sort());
});
