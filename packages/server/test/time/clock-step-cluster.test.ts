// Issue #36, finding 3: a follower restarted after its leader's wall clock stepped back must be
// reached again at once. The leader's reconnect backoff was a wall-clock time (retryAt =
// Date.now() + backoff): stepped back an hour, it waited an hour, and the follower named no leader
// and served no index. Three real servers on loopback, each under a libfaketime clock of its own.
import { join } from 'node:path';
import { FakeClock, libfaketime } from '../support/fake-clock';
import { eventually, sleep } from '../support/wait';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

const lib = libfaketime();
if ('missing' in lib) console.warn(`clock-step cluster test skipped: ${lib.missing}`);
const maybe = 'path' in lib ? test : test.skip;

let cluster: ClusterHarness | undefined;
let clockDir: string | undefined;
afterEach(async () => {
  await cluster?.stop();
  if (clockDir) rmSync(clockDir, { recursive: true, force: true });
});

maybe('a follower restarted after its leader stepped back an hour is replicated to again within seconds', async () => {
  clockDir = mkdtempSync(join(tmpdir(), 'registry-clocks-'));
  const clocks = [0, 1, 2].map((i) => new FakeClock((lib as { path: string }).path, join(clockDir!, `s${i}`)));
  const c = (cluster = await ClusterHarness.start({ size: 3, envFor: (i) => clocks[i].env }));
  const leader = await c.waitForLeader(20_000);
  const follower = [0, 1, 2].find((i) => i !== leader)!;
  expect((await c.http(leader, 'PUT', '/v1/kv/before', 'x')).status).toBe(200);

  await c.kill(follower, 'SIGKILL');
  // Let the leader fail to reach it a few times, so a reconnect backoff is pending…
  await sleep(1_500);
  // …then the leader's wall clock steps back an hour (only CLOCK_REALTIME: its monotonic clock runs on).
  clocks[leader].set('-1h');
  expect((await c.http(leader, 'PUT', '/v1/kv/after-step', 'y', { timeoutMs: 10_000 })).status).toBe(200);
  await c.restart(follower);

  const caughtUp = await eventually(async () => {
    const r = await c.http(follower, 'GET', '/v1/kv/after-step?stale', undefined, { timeoutMs: 1_000 });
    const named = await c.http(follower, 'GET', '/v1/status/leader', undefined, { timeoutMs: 1_000 });
    return r.status === 200 && named.json<string>() !== '';
  }, 20_000);
  if (!caughtUp) throw new Error(`the restarted follower s${follower} was not replicated to:\n${c.diagnostics()}`);
}, 120_000);

maybe('a server whose wall clock is ten minutes off is reported by the leader, in its log and its metrics', async () => {
  clockDir = mkdtempSync(join(tmpdir(), 'registry-clocks-'));
  const clocks = [0, 1, 2].map((i) => new FakeClock((lib as { path: string }).path, join(clockDir!, `s${i}`), i === 2 ? '+10m' : '+0'));
  const c = (cluster = await ClusterHarness.start({ size: 3, envFor: (i) => clocks[i].env }));
  const leader = await c.waitForLeader(20_000);
  // The skewed server s2 is seen +600 s from any other leader; if it leads, the others are -600 s.
  const expected = leader === 2 ? [-600, -600] : [600];
  let offsets: number[] = [];
  const reported = await eventually(async () => {
    const text = (await c.http(leader, 'GET', '/v1/agent/metrics?format=prometheus', undefined, { timeoutMs: 2_000 })).body;
    offsets = [...text.matchAll(/^registry_server_clock_offset_seconds\{[^}]*\} (\S+)$/gm)].map((m) => Number(m[1])).filter((v) => Math.abs(v) > 60);
    return offsets.length === expected.length;
  }, 15_000);
  if (!reported) throw new Error(`no clock offset reported by s${leader}: ${JSON.stringify(offsets)}\n${c.diagnostics()}`);
  for (const [i, v] of offsets.sort((a, b) => a - b).entries()) expect(Math.abs(v - expected[i])).toBeLessThan(5);
  expect(c.logs(leader)).toMatch(/wall clock is \d+ ms (ahead of|behind) the leader's/);
}, 120_000);
