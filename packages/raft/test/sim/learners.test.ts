// Learners (non-voters) under the same deterministic chaos as simulation.test.ts: three voters and
// two learners, with membership changes that add learners, promote them, demote voters and remove
// either. After every step the SafetyChecker holds (a learner counted toward a commit would break
// Leader Completeness or State Machine Safety sooner or later), no learner ever leads, and after
// healing every member — learners included — applies a new entry.
//
// Replay one seed:  SIM_SEED=1234 npx jest packages/raft/test/sim/learners
import { SimCluster, type SimStats } from './sim-cluster';
import { chaosStep, healAndCheckLiveness, type RunSummary } from './nemesis';

const ELECTION_TICKS = 10;

function runSeed(seed: number): RunSummary & SimStats {
  const shape = new SimCluster({ seed: seed ^ 0x1ea4, servers: 1, members: 1 }).rng;
  const sim = new SimCluster({
    seed,
    servers: 6,
    members: 5,
    learners: 2,
    dropRate: shape.next() * 0.15,
    duplicateRate: shape.next() * 0.1,
    maxDelay: shape.int(1, 20),
    parallelWrites: shape.chance(0.5),
    core: { electionTicks: ELECTION_TICKS, maxInflight: shape.int(1, 6), maxEntriesPerAppend: shape.int(1, 8) },
  });
  const summary: RunSummary = { crashes: 0, snapshots: 0, confChanges: 0, transfers: 0 };
  const steps = shape.int(1000, 2500);
  try {
    for (let i = 0; i < steps; i++) chaosStep(sim, summary, { crashRate: 0.005, learners: true });
    const stuck = healAndCheckLiveness(sim, ELECTION_TICKS);
    if (stuck) throw new Error(stuck);
  } catch (err) {
    const e = err as Error;
    e.message = `seed ${seed} at time ${sim.now}: ${e.message}\n  replay: SIM_SEED=${seed} npx jest packages/raft/test/sim/learners`;
    throw e;
  }
  return { ...summary, ...sim.stats };
}

describe('Raft core with learners under a deterministic simulated network', () => {
  const only = process.env.SIM_SEED;
  const seeds = only !== undefined ? [Number(only)] : Array.from({ length: Number(process.env.SIM_SEEDS ?? 300) }, (_, i) => i + 1);

  it(`keeps the safety properties, never lets a learner lead, and recovers after healing (${seeds.length} seeds)`, () => {
    const totals: Record<string, number> = {};
    for (const seed of seeds) {
      for (const [key, value] of Object.entries(runSeed(seed))) totals[key] = (totals[key] ?? 0) + value;
    }
    if (only !== undefined) return;
    expect(['crashes', 'confChanges', 'transfers', 'elections', 'readsServed'].filter((key) => !(totals[key] > 0))).toEqual([]);
  });
});
