// Issue #14 — reads that grow with servers: three voters and two non-voting servers (-non-voter,
// Raft learners), real processes on loopback. Writes go through any server; a default read on a
// follower or a non-voter sees every write acknowledged before it, wherever that write entered
// (the follower asks the leader for its commit index and waits to apply up to it); the non-voters
// never count toward the quorum; one is promoted with `registry operator raft promote`.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CLI } from '../support/processes';
import { eventually } from '../support/wait';
import { ClusterHarness } from './support/cluster-harness';
import { valueOf } from '../metrics/scrape';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

jest.setTimeout(240_000);

const run = promisify(execFile);
const VOTERS = [0, 1, 2];
const NON_VOTERS = [3, 4];

interface RaftConfiguration {
  Servers: { ID: string; Node: string; Address: string; Leader: boolean; Voter: boolean }[];
}

let cluster: ClusterHarness;
afterEach(async () => {
  await cluster?.stop();
});

async function configuration(i: number): Promise<RaftConfiguration> {
  return (await cluster.http(i, 'GET', '/v1/operator/raft/configuration')).json<RaftConfiguration>();
}

/** The whole cluster formed: five servers in the configuration, the last two as non-voters. */
async function formed(): Promise<number> {
  const leader = await cluster.waitForLeader(30_000);
  const ok = await eventually(async () => {
    const conf = await configuration(leader);
    return conf.Servers.length === 5 && conf.Servers.filter((s) => !s.Voter).map((s) => s.Node).sort().join() === 's3,s4';
  }, 30_000, 250);
  if (!ok) throw new Error(`the non-voters did not join\n${cluster.diagnostics()}`);
  return leader;
}

/** Server i's counts of default reads forwarded whole and of commit-index questions sent to the leader. */
async function forwardedOf(i: number): Promise<{ read: number; commitIndex: number }> {
  const f = parsePrometheusTextFormat((await cluster.http(i, 'GET', '/v1/agent/metrics?format=prometheus')).body);
  const count = (kind: string) => valueOf(f, 'registry_rpc_forwarded_total', { kind }) ?? 0;
  return { read: count('read'), commitIndex: count('commit-index') };
}

async function put(i: number, key: string, value: string): Promise<void> {
  const r = await cluster.http(i, 'PUT', `/v1/kv/${key}`, value);
  if (r.status !== 200 || r.body !== 'true') throw new Error(`PUT ${key} on s${i}: ${r.status} ${r.body}`);
}

/** A default-mode read of `key` on server i: its value (undefined when missing) and the meta headers. */
async function get(i: number, key: string): Promise<{ value: string | undefined; knownLeader: string | undefined }> {
  const r = await cluster.http(i, 'GET', `/v1/kv/${key}?raw`);
  if (r.status !== 200 && r.status !== 404) throw new Error(`GET ${key} on s${i}: ${r.status} ${r.body}`);
  return { value: r.status === 200 ? r.body : undefined, knownLeader: r.headers['x-registry-knownleader'] as string | undefined };
}

test('default reads on a follower and on a non-voter see writes acknowledged by other servers; writes go through a non-voter', async () => {
  cluster = await ClusterHarness.start({ size: 5, nonVoters: 2 });
  const leader = await formed();
  const followers = VOTERS.filter((i) => i !== leader);

  // A write entered through a non-voter is forwarded to the leader like any follower's.
  await put(3, 'through-non-voter', 'n1');
  expect((await get(leader, 'through-non-voter')).value).toBe('n1');

  // Read-your-writes across servers: each write is acknowledged by one server, then read at once
  // (default mode) on another — a follower voter or a non-voter — which must already see it.
  const writers = [leader, followers[0], 3, 4, followers[1]];
  const readers = [followers[0], 3, 4, followers[1], leader, 3];
  for (let round = 0; round < 30; round++) {
    const w = writers[round % writers.length];
    const r = readers[(round * 7 + 1) % readers.length] === w ? readers[(round + 2) % readers.length] : readers[(round * 7 + 1) % readers.length];
    await put(w, 'ryw', `v${round}`);
    const seen = await get(r, 'ryw');
    expect({ round, writer: w, reader: r, value: seen.value }).toEqual({ round, writer: w, reader: r, value: `v${round}` });
    expect(seen.knownLeader).toBe('true');
  }

  // Concurrent reads on the non-voters all see the write, and are served by the non-voters
  // themselves: they ask the leader only for its commit index (in shared questions), and forward
  // no read whole.
  const before = await Promise.all(NON_VOTERS.map((i) => forwardedOf(i)));
  await put(leader, 'burst', 'b1');
  const burst = await Promise.all(Array.from({ length: 40 }, (_, k) => get(NON_VOTERS[k % 2], 'burst')));
  expect(burst.every((b) => b.value === 'b1')).toBe(true);
  const after = await Promise.all(NON_VOTERS.map((i) => forwardedOf(i)));
  const asked = after.reduce((n, a, k) => n + a.commitIndex - before[k].commitIndex, 0);
  const forwardedWhole = after.reduce((n, a, k) => n + a.read - before[k].read, 0);
  expect(asked).toBeGreaterThanOrEqual(1);
  expect(asked).toBeLessThanOrEqual(40);
  expect(forwardedWhole).toBe(0);

  // Autopilot lists the non-voters, and counts fault tolerance among the three voters only.
  const health = (await cluster.http(followers[0], 'GET', '/v1/operator/autopilot/health')).json<{
    FailureTolerance: number;
    Servers: { Name: string; Voter: boolean }[];
  }>();
  expect(health.Servers.filter((s) => !s.Voter).map((s) => s.Name).sort()).toEqual(['s3', 's4']);
  expect(health.FailureTolerance).toBe(1);
});

test('the non-voters never count toward the quorum; a non-voter is promoted to a voter', async () => {
  cluster = await ClusterHarness.start({ size: 5, nonVoters: 2 });
  const leader = await formed();

  // Both non-voters gone: the three voters still commit.
  for (const i of NON_VOTERS) await cluster.kill(i, 'SIGKILL');
  await put(leader, 'without-non-voters', 'ok');
  expect((await get(VOTERS.find((i) => i !== leader)!, 'without-non-voters')).value).toBe('ok');

  // Back, they catch up and serve default reads of what was written meanwhile.
  for (const i of NON_VOTERS) await cluster.restart(i);
  expect(await eventually(async () => (await get(3, 'without-non-voters')).value === 'ok', 30_000, 250)).toBe(true);
  expect(await eventually(async () => (await get(4, 'without-non-voters')).value === 'ok', 30_000, 250)).toBe(true);

  // Two of the three voters gone: three servers live, but two of them cannot vote — no write commits.
  const survivor = leader;
  const downed = VOTERS.filter((i) => i !== survivor);
  for (const i of downed) await cluster.kill(i, 'SIGKILL');
  const refused = await cluster.http(3, 'PUT', '/v1/kv/without-quorum', 'x', { timeoutMs: 20_000 });
  expect(refused.status).toBe(500);
  // A stale read on a non-voter still answers from its own state.
  expect((await cluster.http(3, 'GET', '/v1/kv/without-non-voters?raw&stale')).body).toBe('ok');
  for (const i of downed) await cluster.restart(i);
  const back = await cluster.waitForLeader(30_000);

  // Promote s3 through the CLI, by address; the configuration then shows it as a voter.
  const s3 = cluster.servers[3].serverAddress;
  const promoted = await run(process.execPath, [CLI, 'operator', 'raft', 'promote', s3, '-http-addr', `127.0.0.1:${cluster.servers[back].httpPort}`]);
  expect(promoted.stdout).toContain(`Promoted peer with address "${s3}"`);
  const conf = await configuration(back);
  expect(conf.Servers.find((s) => s.Node === 's3')?.Voter).toBe(true);
  expect(conf.Servers.find((s) => s.Node === 's4')?.Voter).toBe(false);

  // Promoting a voter, or an unknown server, is the operator's mistake.
  const again = await cluster.http(back, 'POST', `/v1/operator/raft/promote?address=${s3}`);
  expect(again.status).toBe(400);
  expect(again.body).toContain('already a voter');
  expect((await cluster.http(back, 'POST', '/v1/operator/raft/promote')).status).toBe(400);
  expect((await cluster.http(back, 'POST', '/v1/operator/raft/promote?id=no-such-server')).status).toBe(400);

  // Four voters now, so three make a quorum: with s3 and one original voter down, the two voters
  // left (and s4, a non-voter) cannot commit; with s3 back they can. s3's vote counts.
  const [a] = VOTERS.filter((i) => i !== back);
  await cluster.kill(a, 'SIGKILL');
  await cluster.kill(3, 'SIGKILL');
  const noQuorum = await cluster.http(back, 'PUT', '/v1/kv/four-voters', 'x', { timeoutMs: 20_000 });
  expect(noQuorum.status).toBe(500);
  await cluster.restart(3);
  const leaderAgain = await cluster.waitForLeader(30_000);
  expect(await eventually(async () => (await cluster.http(leaderAgain, 'PUT', '/v1/kv/four-voters', 'y')).body === 'true', 30_000, 500)).toBe(true);
});
