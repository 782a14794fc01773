// Issue 33: thousands of idle connections to a follower's server port took its descriptors; it
// could not open its log's next segment, left Raft for as long as they were held, and its HTTP API
// reset every connection. Here three servers run under `ulimit -n 1024` and 3,000 connections that
// send nothing are kept open against a follower's server port for 15 s from six loopback addresses
// (connections the server closes are opened again), while the leader takes 64 KiB writes (so the
// follower's log moves to new segment files during the flood). The follower must keep applying
// what the leader commits, answer HTTP, and keep its leader and term; the refusals are counted.
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { eventually, sleep } from '../support/wait';
import { openFds, openIdle, raftStats, refusalCounts, serverPortConnections, type IdleSocket } from './support';

jest.setTimeout(90_000);

const NOFILE = 1024;
const TARGET = 3_000;
const FLOOD_MS = 15_000;
/** Flood sources (the servers' own links come from 127.0.0.1). */
const SOURCES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'];
/** A bound on the connections opened in all (the server keeps closing them). */
const MAX_OPENED = 60_000;
const VALUE = 'v'.repeat(64 << 10);

let cluster: ClusterHarness | undefined;
const sockets: IdleSocket[] = [];

afterAll(async () => {
  for (const s of sockets) s.socket.destroy();
  await cluster?.stop();
});

test('a follower flooded with idle server-port connections keeps applying and answering', async () => {
  cluster = await ClusterHarness.start({ size: 3, nofile: { 0: NOFILE, 1: NOFILE, 2: NOFILE } });
  const c = cluster;
  const leader = await c.waitForLeader(40_000);
  const follower = (leader + 1) % 3;
  expect((await c.http(follower, 'PUT', '/v1/kv/flood/before', 'b', { timeoutMs: 10_000 })).body).toBe('true');
  const before = await raftStats(c, follower);
  const port = c.servers[follower]!.serverPort;
  const pid = c.pid(follower)!;
  let maxFds = 0;
  const fdSampler = setInterval(() => (maxFds = Math.max(maxFds, openFds(pid))), 100);

  // Keep about TARGET connections open (from the flooder's side) until FLOOD_MS have passed.
  const floodEnd = Date.now() + FLOOD_MS;
  let live: IdleSocket[] = [];
  const flooding = (async () => {
    let round = 0;
    while (Date.now() < floodEnd && sockets.length < MAX_OPENED) {
      live = live.filter((s) => !s.closed);
      const missing = Math.min(TARGET - live.length, MAX_OPENED - sockets.length);
      if (missing > 0) {
        const per = Math.ceil(missing / SOURCES.length);
        const opened = await Promise.all(SOURCES.map((localAddress) => openIdle(port, per, { localAddress, batch: 250, into: sockets })));
        live.push(...opened.flat());
      }
      round++;
      await sleep(500);
    }
    return round;
  })();

  // Meanwhile: writes on the leader; the follower must apply them and answer HTTP throughout.
  const lags: number[] = [];
  let writes = 0;
  let followerAnswers = 0;
  let followerFailures = 0;
  while (Date.now() < floodEnd) {
    const put = await c.http(leader, 'PUT', `/v1/kv/flood/k${writes}`, VALUE, { timeoutMs: 10_000 });
    expect(put.body).toBe('true');
    writes++;
    const target = (await raftStats(c, leader)).commitIndex;
    const startedWaiting = Date.now();
    const caughtUp = await eventually(async () => {
      try {
        const s = await raftStats(c, follower);
        followerAnswers++;
        return s.appliedIndex >= target;
      } catch {
        followerFailures++;
        return false;
      }
    }, 5_000, 50);
    expect(caughtUp).toBe(true);
    lags.push(Date.now() - startedWaiting);
    await sleep(100);
  }
  const rounds = await flooding;
  console.log(`follower flood: ${writes} writes, lags ${lags.join(',')} ms, ${rounds} flood rounds, ${sockets.length} connections opened, max ${maxFds} descriptors`);
  const floodOpened = sockets.length;
  const counted = await serverPortConnections(c, follower);
  clearInterval(fdSampler);

  // (A loaded machine runs few rounds: each waits for the follower; the flood runs in this process too.)
  expect(writes).toBeGreaterThanOrEqual(3);
  expect(followerFailures).toBe(0);
  expect(followerAnswers).toBeGreaterThanOrEqual(writes);
  // Each write reached the follower quickly: it never left Raft.
  expect(Math.max(...lags)).toBeLessThan(5_000);
  const after = await raftStats(c, follower);
  expect(after.term).toBe(before.term);
  expect(after.leader).toBe(before.leader);
  expect(after.role).toBe('follower');
  // The flood was real (thousands of connections) and the follower held only its cap of them
  // (rpc_max_conns, derived from the limit: 128), keeping a quarter of its descriptors free.
  // (Counted on the server: a client's socket still looks connected while the kernel has it half-open.)
  expect(floodOpened).toBeGreaterThanOrEqual(TARGET);
  expect(counted).toBeGreaterThanOrEqual(0);
  expect(counted).toBeLessThanOrEqual(128);
  expect(maxFds).toBeGreaterThan(0);
  expect(maxFds).toBeLessThan(NOFILE * 0.75);
  const refused = await refusalCounts(c, follower);
  expect((refused.max_conns ?? 0) + (refused.max_conns_per_client ?? 0)).toBeGreaterThanOrEqual(TARGET - 200);
  for (const s of sockets) s.socket.destroy();

  // Afterwards: a write through the follower is forwarded and read back from it.
  expect((await c.http(follower, 'PUT', '/v1/kv/flood/after', 'a', { timeoutMs: 10_000 })).body).toBe('true');
  expect((await c.http(follower, 'GET', '/v1/kv/flood/after?raw', undefined, { timeoutMs: 10_000 })).body).toBe('a');
  expect(c.running(follower)).toBe(true);
});
