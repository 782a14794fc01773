// The leader's autopilot pass (cluster/learner-autopilot.ts) promotes a non-voter that has caught
// up and does not declare itself `-non-voter`, even when that server never asks to be promoted —
// a server of an older version that stops asking once it is in, or one added by `registry join`
// on another member. Before it, such a server stayed a non-voter for good. A `-non-voter` server
// stays one. Three agents in one process on an in-memory network, plus the servers under test.
import { eventually, sleep } from '../support/wait';
import { http } from '../support/dev-agent';
import { agentUrl as url, InMemoryCluster } from './support/in-memory-cluster';
import { startExtraServer, type ExtraServer } from './support/extra-server';

// Bounds allow for a loaded two-core machine: a pass runs every second or two when idle.
jest.setTimeout(120_000);

const cluster = new InMemoryCluster('autopilot');
const extras: ExtraServer[] = [];

beforeAll(async () => {
  await cluster.start('registry-autopilot-');
}, 60_000);

afterAll(async () => {
  for (const e of extras) await e.stop();
  await cluster.stop();
});

interface Servers {
  Servers: { ID: string; Node: string; Address: string; Voter: boolean }[];
}

async function leaderIndex(): Promise<number> {
  let found = -1;
  const ok = await eventually(async () => {
    const address = (await http(url(cluster.agents[0]!), 'GET', '/v1/status/leader')).json as string;
    found = cluster.addresses.indexOf(address);
    return found >= 0 && cluster.agents[found]!.raft.isLeader();
  }, 30_000, 100);
  if (!ok) throw new Error('no leader');
  return found;
}

/** Whether server `id` is a voter in the leader's configuration (undefined: not in it). */
async function voter(id: string): Promise<boolean | undefined> {
  const leader = cluster.agents[await leaderIndex()]!;
  const conf = (await http(url(leader), 'GET', '/v1/operator/raft/configuration')).json as Servers;
  return conf.Servers.find((s) => s.ID === id)?.Voter;
}

test('a caught-up non-voter that never asks to be promoted is made a voter by the leader', async () => {
  // No -retry-join: it never asks the leader for anything.
  const quiet = await startExtraServer(cluster.network, { node: 'quiet', address: '127.0.0.1:4' });
  extras.push(quiet);
  const leader = cluster.agents[await leaderIndex()]!;
  await http(url(leader), 'PUT', '/v1/kv/before-quiet', 'yes');
  // Added as a learner the way an older server that stopped asking once it was in is left.
  await leader.raft.addServer({ id: quiet.agent.nodeId, address: '127.0.0.1:4', learner: true });
  expect(leader.raft.configuration().find((s) => s.id === quiet.agent.nodeId)?.learner).toBe(true);

  const promoted = await eventually(async () => (await voter(quiet.agent.nodeId)) === true, 30_000, 200);
  expect(promoted).toBe(true);
  // A voter that has the log: it serves what was written before it came.
  expect(await eventually(async () => (await http(url(quiet.agent), 'GET', '/v1/kv/before-quiet?raw&stale')).text === 'yes', 20_000, 200)).toBe(true);
});

test('a -non-voter server stays a non-voter although it has caught up', async () => {
  const leader = cluster.agents[await leaderIndex()]!;
  await http(url(leader), 'PUT', '/v1/kv/before-nv', 'yes');
  const nv = await startExtraServer(cluster.network, { node: 'nv', address: '127.0.0.1:5', nonVoter: true, retryJoin: cluster.addresses });
  extras.push(nv);
  // In as a learner, and caught up: it has what was written before it came.
  expect(await eventually(async () => (await voter(nv.agent.nodeId)) === false, 30_000, 200)).toBe(true);
  expect(await eventually(async () => (await http(url(nv.agent), 'GET', '/v1/kv/before-nv?raw&stale')).text === 'yes', 30_000, 200)).toBe(true);

  // Many autopilot passes later (one a second), still a learner.
  for (let i = 0; i < 8; i++) {
    await sleep(1_000);
    expect(await voter(nv.agent.nodeId)).toBe(false);
  }
});
