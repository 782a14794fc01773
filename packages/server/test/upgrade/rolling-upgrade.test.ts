// Issue #34: a rolling upgrade from an earlier release to this working tree loses no acknowledged
// write. Three servers of the pinned commit below (built by the test, support/old-release.ts) take
// writes through all three; one at a time, followers first and the leader last, each is stopped
// gracefully (SIGTERM, as docs/operations.md "Upgrading" says), started again as this tree's binary
// on the same data dir and ports, and waited for until autopilot counts it a healthy voter with the
// leader's log. Writes run the whole time, through every server of whichever release. At the end
// every acknowledged write is read back, consistently, from each server.
//
// Snapshots are frequent (a low snapshot_threshold and trailing_logs): each data dir holds
// snapshots the old release wrote, a server that was down for its upgrade is behind the leader's
// trailing entries and may be sent a snapshot across releases, and this tree's binary restores
// from what the old one persisted. Only public behaviour is relied on: the config file, the HTTP
// API, SIGTERM, and the documented `data-format` marker; never the layout of the rest of the data dir.
//
// A data dir of a newer format refused by an older binary, naming both formats, is
// test/lifecycle/data-format.test.ts (the pinned commit predates the marker, so it cannot refuse).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { CLI } from '../support/processes';
import { eventually } from '../support/wait';
import { AckedWriter, KV_PREFIX, NODE_PREFIX } from './support/acked-writes';
import { oldRelease, type OldRelease } from './support/old-release';

/**
 * The release upgraded from: fb0f5d3, the last commit of 2026-11-28 ("Review: a follower's default
 * read catches up through caughtUpWithLeader…"). It passed CI from a fresh clone (stop 23: 2121
 * passed, 0 failed), it is the day before the data-format marker (265b3e4), so the upgrade takes
 * the marker's "no marker yet" path on data dirs with real cluster state, and its package-lock
 * installs the same versions as this tree's (only additions since), so its build links to this
 * checkout's node_modules instead of installing. Move it forward to a later release when one is cut.
 */
const OLD_COMMIT = 'fb0f5d378b74cb7ea583e4e5fbd5d20b24fc72c7';

// Bounds are generous (a shared 2-core CI machine). The whole file, build included, takes ~2 min
// there the first time (the build links this checkout's dependencies); should the pinned commit's
// dependencies stop matching, its build runs `npm ci` (~2.5 min more, once per machine).
const BUILD_MS = 360_000;
const TEST_MS = 240_000;
const LEADER_MS = 30_000;
const STOP_MS = 30_000;
const HEALTHY_MS = 60_000;
/** Acknowledged writes each server must take in each of its releases. */
const WRITES_PER_PHASE = 50;
const PHASE_MS = 30_000;
/**
 * The second server upgraded stays down until the others have acknowledged this many writes: more
 * than the leader keeps behind a snapshot (SNAPSHOT_THRESHOLD + TRAILING_LOGS), so it comes back
 * behind the leader's log and is sent a snapshot by the old leader, across releases. The first and
 * the last come back at once, within the leader's log, and start from the snapshot the old release
 * stored and their own log.
 */
const SNAPSHOT_THRESHOLD = 64;
const TRAILING_LOGS = 256;
const DOWNTIME_WRITES = 2 * (SNAPSHOT_THRESHOLD + TRAILING_LOGS);
const DOWNTIME_MS = 60_000;

let release: OldRelease;
let cluster: ClusterHarness | undefined;
let writer: AckedWriter | undefined;
let configDir: string | undefined;

beforeAll(() => {
  release = oldRelease(OLD_COMMIT);
}, BUILD_MS);

afterAll(async () => {
  await writer?.stop();
  await cluster?.stop();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

interface HealthReply {
  Healthy: boolean;
  Servers: Array<{ Name: string; Healthy: boolean; Voter: boolean; LastIndex: number }>;
}

/** Until autopilot, asked through server i, counts every server a healthy voter (Consul: 200, not 429). */
async function allHealthyVoters(c: ClusterHarness, i: number): Promise<boolean> {
  const r = await c.http(i, 'GET', '/v1/operator/autopilot/health', undefined, { timeoutMs: 5000 });
  if (r.status !== 200) return false;
  const h = r.json<HealthReply>();
  return h.Healthy && h.Servers.length === c.servers.length && h.Servers.every((s) => s.Healthy && s.Voter);
}

async function raftVoters(c: ClusterHarness, i: number): Promise<string[]> {
  const r = await c.http(i, 'GET', '/v1/operator/raft/configuration', undefined, { timeoutMs: 5000 });
  expect(r.status).toBe(200);
  return r
    .json<{ Servers: Array<{ Node: string; Voter: boolean }> }>()
    .Servers.filter((s) => s.Voter)
    .map((s) => s.Node)
    .sort();
}

test('a rolling upgrade from the pinned release, under writes through every server, keeps every acknowledged write', async () => {
  configDir = mkdtempSync(join(tmpdir(), 'registry-upgrade-config-'));
  // Snapshots often, few entries kept behind them: the same keys both releases read (the raft block, docs/operations.md).
  const config = join(configDir, 'raft.json');
  writeFileSync(config, JSON.stringify({ raft: { snapshot_threshold: SNAPSHOT_THRESHOLD, snapshot_interval_ms: 0, trailing_logs: TRAILING_LOGS } }));
  const runs: Array<'old' | 'new'> = ['old', 'old', 'old'];
  const c = (cluster = await ClusterHarness.start({
    size: 3,
    binFor: (i) => (runs[i] === 'old' ? release.bin : CLI),
    extraArgs: ['-dns-port', '-1', '-config-file', config],
  }));
  await c.waitForLeader(LEADER_MS);
  expect(await eventually(() => allHealthyVoters(c, 0), HEALTHY_MS)).toBe(true);
  // The pinned release writes no marker: the upgrade below adopts unmarked data dirs.
  for (const s of c.servers) expect(existsSync(join(s.dataDir, 'data-format'))).toBe(false);

  writer = new AckedWriter(c, (i) => runs[i] as string, { workers: 6, nodeEvery: 10, pauseMs: 10, maxWrites: 60_000, maxMs: TEST_MS - 20_000 });
  const w = writer;
  const phaseDone = (i: number, r: 'old' | 'new') => eventually(() => w.count(i, r) >= WRITES_PER_PHASE, PHASE_MS);
  for (const s of c.servers) expect(await phaseDone(s.index, 'old')).toBe(true);

  const order: string[] = [];
  for (let round = 0; round < c.servers.length; round++) {
    const leader = await c.waitForLeader(LEADER_MS);
    const left = c.servers.filter((s) => runs[s.index] === 'old').map((s) => s.index);
    // Followers first, the leader last: one leadership change, onto a server of the new release.
    const next = left.find((i) => i !== leader) ?? (left[0] as number);
    order.push(`s${next}${next === leader ? ' (leader)' : ''}`);

    await c.kill(next, 'SIGTERM', STOP_MS); // throws if it does not exit in time
    expect(c.logs(next)).toMatch(/exited \(code 0, signal null\)\n$/);
    if (round === 1) {
      const acked = w.acked.length;
      expect(await eventually(() => w.acked.length >= acked + DOWNTIME_WRITES, DOWNTIME_MS)).toBe(true);
    }
    runs[next] = 'new';
    await c.restart(next);
    const healthy = await eventually(() => allHealthyVoters(c, next), HEALTHY_MS, 250);
    if (!healthy) throw new Error(`s${next} (now this tree's binary) is not a healthy voter after ${HEALTHY_MS} ms (upgrade order ${order.join(', ')})\n${c.diagnostics()}`);
    expect(await raftVoters(c, next)).toEqual(c.servers.map((s) => s.node).sort());

    // This tree's binary marked the data dir the old one left unmarked, as its own release.
    const self = (await c.http(next, 'GET', '/v1/agent/self')).json<{ Config: { Version: string } }>();
    const marker = JSON.parse(readFileSync(join(c.servers[next]!.dataDir, 'data-format'), 'utf8')) as { format: unknown; written_by: unknown };
    expect(marker).toEqual({ format: expect.any(Number), written_by: self.Config.Version });

    expect(await phaseDone(next, 'new')).toBe(true);
  }
  await writer.stop();
  expect(runs).toEqual(['new', 'new', 'new']);

  // Every acknowledged write, from each server, read consistently (through the leader's commit).
  const kvAcked = writer.acked.filter((a) => a.kind === 'kv');
  const nodesAcked = writer.acked.filter((a) => a.kind === 'node');
  for (const s of c.servers) {
    const kv = await c.http(s.index, 'GET', `/v1/kv/${KV_PREFIX}?recurse&consistent`, undefined, { timeoutMs: 30_000 });
    expect(kv.status).toBe(200);
    const values = new Map(kv.json<Array<{ Key: string; Value: string | null }>>().map((e) => [e.Key, Buffer.from(e.Value ?? '', 'base64').toString('utf8')]));
    const lostKv = kvAcked.filter((a) => values.get(a.name) !== a.value).map((a) => `${a.name} (acknowledged by s${a.server}, ${a.release})`);
    expect({ server: s.node, lost: lostKv.length, first: lostKv.slice(0, 10) }).toEqual({ server: s.node, lost: 0, first: [] });

    const nodes = await c.http(s.index, 'GET', '/v1/catalog/nodes?consistent', undefined, { timeoutMs: 30_000 });
    expect(nodes.status).toBe(200);
    const addresses = new Map(nodes.json<Array<{ Node: string; Address: string }>>().filter((n) => n.Node.startsWith(NODE_PREFIX)).map((n) => [n.Node, n.Address]));
    const lostNodes = nodesAcked.filter((a) => addresses.get(a.name) !== a.value).map((a) => `${a.name} (acknowledged by s${a.server}, ${a.release})`);
    expect({ server: s.node, lost: lostNodes.length, first: lostNodes.slice(0, 10) }).toEqual({ server: s.node, lost: 0, first: [] });
  }
  // Say what was run (the order shows whether the leader went last), for the CI log; the count of
  // snapshots installed is read from the servers' logs, for information only.
  const installs = c.servers.reduce((n, s) => n + (c.logs(s.index).match(/installed snapshot/g) ?? []).length, 0);
  console.log(
    `rolling upgrade ${OLD_COMMIT.slice(0, 7)} (${release.deps}) → working tree, order ${order.join(', ')}, ${installs} snapshot(s) installed: ` +
      `${kvAcked.length} KV puts and ${nodesAcked.length} registers acknowledged, all found on every server; ` +
      `not acknowledged: ${JSON.stringify(Object.fromEntries(writer.refused))}`,
  );
}, TEST_MS);
