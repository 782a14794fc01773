// Issue #10: a nemesis run. Three real servers on loopback, every server→server link through a
// LinkProxy. Clients send every request to a random server (writes entering a follower are
// forwarded to the leader) while, round after round, the current leader is SIGKILLed (then
// restarted), SIGSTOPped past an election timeout (then SIGCONTed) and cut off from both peers
// (then healed). Four workloads run at once, and each is checked afterwards:
//
//  1. `PUT /v1/kv/<fresh key>?cas=0`: a key answered `false` must not exist (nothing else ever
//     writes it, so `false` can only mean "applied, then applied again"), a key answered `true`
//     must exist.
//  2. puts, `?consistent` gets and CAS (by ModifyIndex) on 30 keys: the history, with unknown
//     outcomes recorded as such, must be linearizable (support/linearizability.ts). Every value
//     is written once, so a CAS on the ModifyIndex read with value v is a CAS on v — a write
//     applied twice moves the index without changing the value and shows up as a CAS refusal.
//  3. catalog registers: each client re-registers its own instance with an increasing seq (Port
//     and Meta.seq). Linearizable, and stronger: the final seq is the last acknowledged one or a
//     later unknown one, never older; a read after an acknowledged write never shows an older seq.
//  4. a lock without fencing: clients contend for one key with `?acquire`/`?release` and sessions
//     tied to no check (a killed server cannot invalidate them, so no lock-delay is involved);
//     holding intervals [acquire answered true, release sent] of different clients never overlap,
//     and the first release of a held lock never answers `false` (the lock was ours). A release
//     of unknown outcome leaves the lock possibly held until a consistent read of the key shows
//     another `Session` (or it is released again).
//
// Outcomes: 200 answered, 4xx or a refused connection certainly not applied, anything else (5xx,
// reset, timeout) unknown. The client timeout (12 s) exceeds the servers' write budget, so a
// client moves on only once no copy of its write can still enter the log.
//
// Duration: about 50 s on an idle 2-core box (NEMESIS_ROUNDS rounds of three faults, 3 by
// default; each round about 15 s), bounded by the 230 s timeout below. NEMESIS_BIN runs another
// build of the CLI (e.g. a checkout of an older commit) instead of packages/cli/bin/registry.js.
import { ClusterHarness } from './support/cluster-harness';
import type { FaultKind, Nemesis } from './support/nemesis-faults';
import { runNemesis } from './support/nemesis-run';

const ROUNDS = Number(process.env.NEMESIS_ROUNDS ?? 3);
const FAULTS: FaultKind[] = ['kill', 'pause', 'isolate'];

jest.setTimeout(230_000);

let cluster: ClusterHarness | undefined;
let nemesis: Nemesis | undefined;
afterAll(async () => {
  nemesis?.release();
  await cluster?.stop();
});

test('nemesis: leader killed, paused and isolated under four concurrent workloads; no safety violation', async () => {
  const bin = process.env.NEMESIS_BIN;
  const c = await ClusterHarness.start({ size: 3, proxied: true, ...(bin ? { bin } : {}) });
  cluster = c;
  await runNemesis(c, { rounds: ROUNDS, faults: FAULTS, diagnostics: () => c.diagnostics(), onNemesis: (n) => (nemesis = n) });
});
