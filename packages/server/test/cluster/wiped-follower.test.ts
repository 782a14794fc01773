// Three real servers on loopback (issue #16). A follower is SIGKILLed, its data dir wiped (only its
// node-id is put back: the same server, same id), and it is restarted while clients keep writing.
// It must serve the full state within a bound, and until it has caught up it must not answer a
// `?stale` read with X-Registry-KnownLeader: true — the bug was an empty store served as current.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, sleep } from '../support/wait';
import { ClusterHarness } from './support/cluster-harness';

jest.setTimeout(180_000);

const PRELOAD = 2_000;
/** From the restart to a full answer with a known leader (generous: CI machines are shared). */
const CATCH_UP_BOUND_MS = 30_000;

let cluster: ClusterHarness | undefined;
let dataRoot: string | undefined;
afterEach(async () => {
  await cluster?.stop();
  if (dataRoot) rmSync(dataRoot, { recursive: true, force: true });
});

interface StaleAnswer {
  at: number;
  status: number;
  knownLeader: string | undefined;
  nodes: number;
}

test('a wiped follower restarted with the same id under write load: never an empty answer with a known leader, full state within the bound', async () => {
  dataRoot = mkdtempSync(join(tmpdir(), 'registry-wiped-'));
  const dataDirs = { 0: join(dataRoot, 's0'), 1: join(dataRoot, 's1'), 2: join(dataRoot, 's2') };
  const c = (cluster = await ClusterHarness.start({ size: 3, dataDirs }));
  const leader = await c.waitForLeader(15_000);

  // A catalog the restarted server must get back: PRELOAD nodes, 16 writers.
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < PRELOAD) {
        const n = next++;
        const r = await c.http(leader, 'PUT', '/v1/catalog/register', { Node: `pre-${n}`, Address: '10.0.0.1' }, { timeoutMs: 10_000 });
        expect(r.status).toBe(200);
      }
    }),
  );

  const victim = [0, 1, 2].find((i) => i !== leader)!;
  await c.kill(victim, 'SIGKILL');
  c.wipe(victim);

  // Writes go on through the leader while the victim comes back.
  const acked: string[] = [];
  let writing = true;
  const writers = Array.from({ length: 4 }, async (_, w) => {
    let seq = 0;
    while (writing) {
      const node = `load-${w}-${seq++}`;
      try {
        const r = await c.http(leader, 'PUT', '/v1/catalog/register', { Node: node, Address: '10.0.0.2' }, { timeoutMs: 5_000 });
        if (r.status === 200) acked.push(node);
      } catch {
        await sleep(20);
      }
    }
  });

  // The leader is paused (SIGSTOP) as the victim restarts, and let go once the victim has been seen
  // behind: with 2,000 nodes a fast machine has it caught up before its HTTP API listens, and then
  // there is no answer from before the catch-up to check (CI runs saw that twice, even reading every
  // 5 ms). Paused, the leader sends nothing, and the other follower cannot be elected without the
  // victim's vote, which it withholds until caught up; writes wait, then go on.
  const leaderPid = c.pid(leader)!;
  await c.restart(victim);
  process.kill(leaderPid, 'SIGSTOP');
  let paused = true;
  const resume = () => {
    if (paused) process.kill(leaderPid, 'SIGCONT');
    paused = false;
  };
  const restartedAt = Date.now();
  const answers: StaleAnswer[] = [];
  let full: StaleAnswer | undefined;
  try {
    while (!full && Date.now() - restartedAt < CATCH_UP_BOUND_MS) {
      try {
        const r = await c.http(victim, 'GET', '/v1/catalog/nodes?stale', undefined, { timeoutMs: 5_000 });
        const nodes = r.status === 200 ? r.json<{ Node: string }[]>().filter((n) => n.Node.startsWith('pre-')).length : -1;
        const answer = { at: Date.now() - restartedAt, status: r.status, knownLeader: r.headers['x-registry-knownleader'] as string | undefined, nodes };
        answers.push(answer);
        if (answer.status === 200 && answer.knownLeader === 'true' && nodes === PRELOAD) full = answer;
        if (answer.status === 200 && answer.nodes < PRELOAD) resume();
      } catch {
        // not listening yet
      }
      if (Date.now() - restartedAt > 10_000) resume();
      await sleep(answers.length === 0 ? 5 : 25);
    }
  } finally {
    resume();
  }
  writing = false;
  await Promise.all(writers);

  const summary = () => JSON.stringify({ full, answers: answers.length, first: answers.slice(0, 5), logs: c.logs(victim).split('\n').slice(-20) });
  // It came back in time.
  if (!full) throw new Error(`no full answer with a known leader within ${CATCH_UP_BOUND_MS} ms: ${summary()}`);
  // Never: a known leader with less than the state committed before the wipe.
  const claimedBehind = answers.filter((a) => a.status === 200 && a.knownLeader === 'true' && a.nodes < PRELOAD);
  expect(claimedBehind).toEqual([]);
  // And it was seen behind at least once, so the check above is not vacuous.
  expect(answers.some((a) => a.status === 200 && a.knownLeader === 'false' && a.nodes < PRELOAD)).toBe(true);
  expect(acked.length).toBeGreaterThan(0);
  // What it said about itself (docs/raft.md).
  const log = c.logs(victim);
  expect(log).toContain('no Raft state on disk; this server neither votes nor stands for election until it has caught up');
  expect(log).toContain('caught up with the leader; taking part in elections again');

  // Every acknowledged write reaches it too.
  const missing = async () => {
    const r = await c.http(victim, 'GET', '/v1/catalog/nodes?stale', undefined, { timeoutMs: 10_000 });
    const have = new Set(r.json<{ Node: string }[]>().map((n) => n.Node));
    return acked.filter((n) => !have.has(n)).length;
  };
  expect(await eventually(async () => (await missing()) === 0, 20_000)).toBe(true);
});
