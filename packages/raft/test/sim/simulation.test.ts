// Deterministic simulation of the Raft core under drops, delays, duplicates,
// reordering, partitions, crashes with lost unpersisted state, servers that
// lose their whole log and restart with the same id, compaction, membership
// changes and leadership transfers. The Raft safety properties are
// checked after every step; after healing, the cluster must make progress.
//
// Replay one seed:  SIM_SEED=1234 npx jest packages/raft/test/sim
// (add SIM_TRACE=1 to print its events).  More seeds:  SIM_SEEDS=5000 ...
import { SimCluster, type SimStats } from './sim-cluster';
import { chaosStep, healAndCheckLiveness, type RunSummary } from './nemesis';

const ELECTION_TICKS = 10;

type Totals = RunSummary & SimStats;

function runSeed(seed: number, trace?: (line: string) => void): Totals {
  // Derive the run's shape from the seed itself so one number replays everything.
  const shape = new SimCluster({ seed: seed ^ 0x5eed, servers: 1, members: 1 }).rng;
  const five = shape.chance(0.4);
  const sim = new SimCluster({
    seed,
    servers: five ? 5 : 4,
    members: five ? 5 : 3,
    dropRate: shape.next() * 0.2,
    duplicateRate: shape.next() * 0.1,
    maxDelay: shape.int(1, 25),
    parallelWrites: shape.chance(0.5),
    core: { electionTicks: ELECTION_TICKS, maxInflight: shape.int(1, 6), maxEntriesPerAppend: shape.int(1, 8) },
    trace,
  });
  const steps = shape.int(1000, 3000);
  const summary: RunSummary = { crashes: 0, snapshots: 0, confChanges: 0, transfers: 0 };
  // Drawn last, so that the shape of every run without lost logs is what it was before they existed.
  const faults = { crashRate: shape.chance(0.3) ? 0.01 : 0.003, loseLogRate: shape.chance(0.3) ? 0.002 : 0 };
  try {
    for (let i = 0; i < steps; i++) chaosStep(sim, summary, faults);
    const stuck = healAndCheckLiveness(sim, ELECTION_TICKS);
    if (stuck) throw new Error(stuck);
  } catch (err) {
    const e = err as Error;
    e.message = `seed ${seed} at time ${sim.now}: ${e.message}\n  replay: SIM_SEED=${seed} SIM_TRACE=1 npx jest packages/raft/test/sim`;
    throw e;
  }
  return { ...summary, ...sim.stats };
}

describe('Raft core under a deterministic simulated network', () => {
  const only = process.env.SIM_SEED;
  const seeds = only !== undefined ? [Number(only)] : Array.from({ length: Number(process.env.SIM_SEEDS ?? 1000) }, (_, i) => i + 1);

  it(`keeps Election Safety, Log Matching, Leader Completeness and State Machine Safety, and recovers after healing (${seeds.length} seeds)`, () => {
    const trace = only !== undefined && process.env.SIM_TRACE ? (line: string) => process.stdout.write(line + '\n') : undefined;
    const totals: Record<string, number> = {};
    for (const seed of seeds) {
      for (const [key, value] of Object.entries(runSeed(seed, trace))) totals[key] = (totals[key] ?? 0) + value;
    }
    if (only !== undefined) return;
    // The faults and features the run claims to exercise did happen.
    const exercised = [
      'crashes',
      'snapshots',
      'confChanges',
      'transfers',
      'elections',
      'snapshotsInstalled',
      'readsServed',
      'readsFailed',
      'logsLost',
      'logsRecovered',
    ];
    expect(exercised.filter((key) => !(totals[key] > 0))).toEqual([]);
    if (process.env.SIM_STATS) process.stdout.write(JSON.stringify(totals) + '\n');
  });
});
