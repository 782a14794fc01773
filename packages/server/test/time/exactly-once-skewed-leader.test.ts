// Issue #36 finding 1, in rounds, as it was found: a server whose wall clock runs ten minutes ahead
// is made leader while creates (`PUT ?cas=0`) and plain PUTs through every server are in flight;
// no create answered `false` may hold that very write and no key may be written twice
// (support/skewed-leader-rounds.ts). Rounds alternate two ways of killing the other
// leaders (`cut`: many writes left uncommitted and unanswered at once). The "Done when"
// asks for ten rounds: CI runs REGISTRY_SKEWED_ROUNDS (default 2, to stay within its time on a
// loaded two-core machine); bench/time/exactly-once-skewed-leader.sh runs ten, and
// docs/benchmarks/history.md holds its results — and how rarely the rounds catch the old code.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { FakeClock, libfaketime } from '../support/fake-clock';
import { skewedLeaderRound, type RoundResult } from './support/skewed-leader-rounds';

// A round takes 10–100 s on a loaded two-core machine (a killed server's restart and catch-up dominate).
const ROUNDS = Number(process.env.REGISTRY_SKEWED_ROUNDS ?? 2);
jest.setTimeout(60_000 + ROUNDS * 150_000);

const lib = libfaketime();
if ('missing' in lib) console.warn(`exactly-once skewed-leader test skipped: ${lib.missing}`);
const maybe = 'path' in lib ? test : test.skip;

let cluster: ClusterHarness | undefined;
let clockDir: string | undefined;
afterEach(async () => {
  await cluster?.stop();
  if (clockDir) rmSync(clockDir, { recursive: true, force: true });
});

maybe(`${ROUNDS} rounds: a leader 10 minutes ahead applies no create in flight across its election twice`, async () => {
  clockDir = mkdtempSync(join(tmpdir(), 'registry-clocks-'));
  const path = (lib as { path: string }).path;
  const clocks = [0, 1, 2].map((i) => new FakeClock(path, join(clockDir!, `s${i}`), i === 0 ? '+10m' : '+0'));
  // The others wait four times as long for a dead leader (2 s, not 0.5 s) before they stand, so
  // that the skewed server wins the election after a kill at once, as it did in the issue only by
  // luck (the others' leaders killed until it did).
  const patient = join(clockDir, 'patient.json');
  writeFileSync(patient, JSON.stringify({ raft: { election_ticks: 40 } }));
  const c = (cluster = await ClusterHarness.start({ size: 3, proxied: true, envFor: (i) => clocks[i].env, argsFor: (i) => (i === 0 ? [] : ['-config-file', patient]) }));
  await c.waitForLeader(60_000);
  // s0 really runs ten minutes ahead (Node's HTTP Date header is its wall clock).
  expect(Date.parse(String((await c.http(0, 'GET', '/v1/status/leader')).headers.date)) - Date.now()).toBeGreaterThan(9 * 60_000);

  const results: RoundResult[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const r = await skewedLeaderRound(c, round, round % 2 === 0 ? 'cut' : 'kill', { skewed: 0 });
    results.push(r);
    // One line per round, for the bench's record (docs/benchmarks/history.md).
    console.log(`round ${r.round} (${r.handover}, ${r.kills} killed): s0 led after ${r.ledAfterMs} ms, ${r.sent} writes (${r.unanswered} forwarded without an answer) ${JSON.stringify(r.answers)}, duplicates ${r.duplicates.length}, re-applied ${r.reapplied.length}, lost ${r.lost.length}, ${r.tookMs} ms`);
  }
  const bad = results.filter((r) => r.duplicates.length + r.reapplied.length + r.lost.length > 0);
  expect(bad.map((r) => ({ round: r.round, duplicates: r.duplicates, reapplied: r.reapplied, lost: r.lost }))).toEqual([]);
  // The rounds wrote through the handover: most writes were answered `true`.
  for (const r of results) expect(r.answers['200 true'] ?? 0).toBeGreaterThan(r.sent / 2);
});
