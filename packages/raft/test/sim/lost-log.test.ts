// Issue #16: a server whose data disk is wiped restarts with the same id. Here it
// keeps its term and vote ("log lost, hard state kept" — what the server layer
// reduces a lost disk to, and it keeps such a server out of elections until it
// has caught up, as SimCluster.loseLog does). The leader still remembers the
// match index the server had before; replication must notice the lost log and
// bring the server back — with entries, or a snapshot once they are compacted,
// and also in an idle cluster where only heartbeats flow. Every step is checked
// by the SafetyChecker, under duplicated and reordered messages.
import { healAndCheckLiveness } from './nemesis';
import { SimCluster, TICK, type SimServer } from './sim-cluster';

const ELECTION_TICKS = 10;
const ELECTION = ELECTION_TICKS * TICK;

function stableCluster(seed: number): SimCluster {
  const sim = new SimCluster({
    seed,
    servers: 3,
    members: 3,
    maxDelay: 12, // reorders messages across ticks
    duplicateRate: 0.1,
    core: { electionTicks: ELECTION_TICKS, maxInflight: 3, maxEntriesPerAppend: 2 },
  });
  if (!sim.runUntil(10 * ELECTION, () => sim.leader()?.core!.leaderReady === true)) throw new Error(`seed ${seed}: no leader`);
  return sim;
}

/** Proposes `n` entries one at a time and waits until every server applied them. */
function proposeAndSettle(sim: SimCluster, n: number): void {
  let last = '';
  for (let i = 0; i < n; i++) {
    last = String(sim.propose(1)![0]);
    sim.run(TICK);
  }
  if (!sim.runUntil(20 * ELECTION, () => sim.servers.every((s) => s.appliedData.has(last)))) throw new Error('proposals did not settle');
}

function aFollower(sim: SimCluster): SimServer {
  const leader = sim.leader()!;
  return sim.servers.find((s) => s !== leader)!;
}

function sameLogAs(sim: SimCluster, s: SimServer): void {
  const leader = sim.leader()!;
  expect(s.core!.lastIndex).toBe(leader.core!.lastIndex);
  expect(s.core!.commitIndex).toBe(leader.core!.commitIndex);
  expect([...s.appliedData].sort()).toEqual([...leader.appliedData].sort());
}

describe('a server that lost its log and restarts with the same id (issue #16)', () => {
  it.each([1, 2, 3, 4, 5])('is brought back with the entries it lost, and the cluster commits again (seed %i)', (seed) => {
    const sim = stableCluster(seed);
    proposeAndSettle(sim, 12);
    const victim = aFollower(sim);
    sim.loseLog(victim.id);
    expect(victim.core!.lastIndex).toBe(0);
    expect(healAndCheckLiveness(sim, ELECTION_TICKS)).toBeNull();
    sim.run(5 * ELECTION);
    sameLogAs(sim, victim);
    expect(victim.recovering).toBeUndefined();
  });

  it.each([1, 2, 3, 4, 5])('gets a snapshot when the leader compacted the entries it lost (seed %i)', (seed) => {
    const sim = stableCluster(seed);
    proposeAndSettle(sim, 12);
    const leader = sim.leader()!;
    sim.compact(leader.id, 0);
    const victim = aFollower(sim);
    const installed = sim.stats.snapshotsInstalled;
    sim.loseLog(victim.id);
    expect(healAndCheckLiveness(sim, ELECTION_TICKS)).toBeNull();
    sim.run(5 * ELECTION);
    expect(sim.stats.snapshotsInstalled).toBeGreaterThan(installed);
    sameLogAs(sim, victim);
  });

  it.each([1, 2, 3, 4, 5])('is brought back in an idle cluster, by heartbeats alone (seed %i)', (seed) => {
    const sim = stableCluster(seed);
    proposeAndSettle(sim, 12);
    const leader = sim.leader()!;
    const victim = aFollower(sim);
    sim.loseLog(victim.id);
    // No proposal: only the heartbeat answers can show the leader that the log is gone.
    const back = sim.runUntil(10 * ELECTION, () => victim.core!.commitIndex === leader.core!.commitIndex);
    expect(back).toBe(true);
    expect(sim.leader()).toBe(leader);
    sameLogAs(sim, victim);
  });
});
