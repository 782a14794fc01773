// Long-running partition scenarios in the simulated cluster: pre-vote keeps a
// returning server from raising the majority's term, and check-quorum makes a
// leader cut off in a minority step down.
import { SimCluster, TICK } from './sim-cluster';

const ELECTION_TICKS = 10;
const ELECTION = ELECTION_TICKS * TICK; // one election timeout, in simulation time units

function stableCluster(seed: number, servers: number): SimCluster {
  const sim = new SimCluster({ seed, servers, members: servers, maxDelay: 3, core: { electionTicks: ELECTION_TICKS } });
  const elected = sim.runUntil(10 * ELECTION, () => sim.leader()?.core!.leaderReady === true);
  if (!elected) throw new Error(`seed ${seed}: no leader to start from`);
  return sim;
}

describe('pre-vote and check-quorum under partitions', () => {
  it.each([1, 2, 3, 4, 5])('a server partitioned alone for 50 election timeouts does not raise the majority’s term when it returns (seed %i)', (seed) => {
    const sim = stableCluster(seed, 5);
    const leader = sim.leader()!;
    const term = leader.core!.term;
    const loner = sim.servers.find((s) => s !== leader)!;
    sim.isolate(loner.id);
    sim.run(50 * ELECTION);
    expect(loner.core!.term).toBe(term);
    sim.heal();
    sim.run(5 * ELECTION);
    expect(sim.leader()?.id).toBe(leader.id);
    expect(sim.servers.map((s) => s.core!.term)).toEqual(sim.servers.map(() => term));
    expect(loner.core!.leader).toBe(leader.id);
  });

  it.each([1, 2, 3, 4, 5])('a leader cut off in a minority steps down within two election timeouts and the majority elects another (seed %i)', (seed) => {
    const sim = stableCluster(seed, 5);
    const old = sim.leader()!;
    const minority = [old.id, sim.servers.find((s) => s !== old)!.id];
    sim.partition([minority, sim.servers.map((s) => s.id).filter((id) => !minority.includes(id))]);
    const steppedDown = sim.runUntil(2 * ELECTION + TICK, () => old.core!.role !== 'leader');
    expect(steppedDown).toBe(true);
    sim.run(3 * ELECTION);
    const leader = sim.leader()!;
    expect(minority).not.toContain(leader.id);
    expect(leader.core!.leaderReady).toBe(true);
  });
});
