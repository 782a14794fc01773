// Random faults and client activity for one simulated run, drawn from the
// cluster's seeded PRNG so a seed replays exactly.
import { TICK, type SimCluster } from './sim-cluster';
import type { ConfChange } from '../../src/core/configuration';
import type { RaftCore } from '../../src/core/raft-core';

export interface RunSummary {
  crashes: number;
  snapshots: number;
  confChanges: number;
  transfers: number;
}

export interface FaultRates {
  /** Chance per time unit that a live server crashes (restarts happen three times as often). */
  crashRate: number;
  /**
   * Chance per time unit that a server other than the leader loses its log and restarts
   * (SimCluster.loseLog); 0 or absent: never (and no random number is drawn for it, so such
   * runs replay as before). Only one server recovers at a time, and only with no membership
   * change under way (none is proposed until it has recovered): a server whose latest
   * configuration leaves it out does not campaign, and with the recovering server unable to
   * vote too, the remaining majority could be unable to elect anyone.
   */
  loseLogRate?: number;
  /**
   * Membership changes also add learners, promote learners to voters and demote voters to
   * learners (absent: voters only, and no random number is drawn for it, so older runs replay).
   */
  learners?: boolean;
}

/** One time unit of chaos: maybe inject a fault or a client action, then let the cluster react. */
export function chaosStep(sim: SimCluster, summary: RunSummary, faults: FaultRates): void {
  const rng = sim.rng;
  sim.deliverAndTick();
  let leader = sim.leader();
  if (rng.chance(0.06)) sim.propose(rng.int(1, 3));
  if (rng.chance(0.02)) sim.read(rng.pick(sim.servers).id);
  if (rng.chance(faults.crashRate)) {
    const victim = rng.pick(sim.alive);
    if (victim && sim.alive.length > 1) {
      sim.crash(victim.id, rng.pick(['lost', 'persisted', 'sent'] as const));
      summary.crashes++;
    }
  }
  if (faults.loseLogRate && rng.chance(faults.loseLogRate) && !sim.recovering() && sim.membershipSettled()) {
    const victims = sim.servers.filter((s) => s !== leader);
    if (victims.length > 0) sim.loseLog(rng.pick(victims).id);
  }
  if (rng.chance(faults.crashRate * 3)) {
    const down = sim.servers.filter((s) => s.core === null);
    if (down.length > 0) sim.restart(rng.pick(down).id);
  }
  if (rng.chance(0.003)) {
    const ids = sim.servers.map((s) => s.id);
    if (leader && rng.chance(0.4)) sim.isolate(leader.id);
    else {
      const a = ids.filter(() => rng.chance(0.5));
      sim.partition([a, ids.filter((id) => !a.includes(id))]);
    }
  }
  if (rng.chance(0.005)) sim.heal();
  leader = sim.leader(); // it may have crashed or lost its log
  if (rng.chance(0.006)) {
    const s = rng.pick(sim.alive);
    if (s) {
      sim.compact(s.id, rng.int(0, 4));
      summary.snapshots++;
    }
  }
  if (leader && rng.chance(0.003) && !sim.recovering() && faults.learners) {
    if (learnerChange(sim, leader.core!)) summary.confChanges++;
  } else if (leader && rng.chance(0.003) && !sim.recovering()) {
    const members = leader.core!.configuration.servers.map((s) => s.id);
    const others = sim.servers.map((s) => s.id).filter((id) => !members.includes(id));
    const remove = members.length > 3 && (others.length === 0 || rng.chance(0.5));
    const id = remove ? rng.pick(members) : others.length > 0 ? rng.pick(others) : undefined;
    if (id && leader.core!.proposeConfChange({ type: remove ? 'remove' : 'add', server: { id, address: `addr-${id}` } })) {
      summary.confChanges++;
    }
  }
  if (leader && rng.chance(0.002)) {
    const members = leader.core!.configuration.servers.map((s) => s.id).filter((id) => id !== leader.id);
    leader.core!.transferLeadership(members.length > 0 && rng.chance(0.5) ? rng.pick(members) : undefined);
    summary.transfers++;
  }
  sim.processReadies();
}

/**
 * One random single-server change with learners: add a non-member as a learner or a voter, promote
 * a learner, demote a voter (never below three voters) or remove a member (never a voter below
 * three). Returns whether the leader accepted it (one change at a time).
 */
function learnerChange(sim: SimCluster, core: RaftCore): boolean {
  const rng = sim.rng;
  const servers = core.configuration.servers;
  const voters = servers.filter((s) => !s.learner).map((s) => s.id);
  const learners = servers.filter((s) => s.learner).map((s) => s.id);
  const others = sim.servers.map((s) => s.id).filter((id) => !servers.some((m) => m.id === id));
  const choice = rng.pick(['add-learner', 'add-voter', 'promote', 'demote', 'remove-learner', 'remove-voter'] as const);
  const change = ((): ConfChange | undefined => {
    const of = (type: ConfChange['type'], id: string | undefined) => (id === undefined ? undefined : { type, server: { id, address: `addr-${id}` } });
    switch (choice) {
      case 'add-learner':
        return others.length > 0 ? of('addLearner', rng.pick(others)) : undefined;
      case 'add-voter':
        return others.length > 0 ? of('add', rng.pick(others)) : undefined;
      case 'promote':
        return learners.length > 0 ? of('add', rng.pick(learners)) : undefined;
      case 'demote':
        return voters.length > 3 ? of('addLearner', rng.pick(voters)) : undefined;
      case 'remove-learner':
        return learners.length > 0 ? of('remove', rng.pick(learners)) : undefined;
      case 'remove-voter':
        return voters.length > 3 ? of('remove', rng.pick(voters)) : undefined;
    }
  })();
  return change !== undefined && core.proposeConfChange(change) !== null;
}

/** Heals everything and waits (bounded) for a leader to commit a new proposal on every member. */
export function healAndCheckLiveness(sim: SimCluster, electionTicks: number): string | null {
  sim.heal();
  sim.dropRate = 0;
  for (const s of sim.servers) if (!s.core) sim.restart(s.id);
  // Forty election timeouts, plus time for a follower to fetch the whole log one append per
  // round trip (a run may use one entry per append and one append in flight).
  const longestLog = Math.max(...sim.alive.map((s) => s.core!.lastIndex));
  const budget = 40 * electionTicks * TICK + longestLog * 2 * sim.maxDelay;
  let marker: string | null = null;
  let markerTerm = 0;
  const done = sim.runUntil(budget, () => {
    const leader = sim.leader();
    // A proposal dies with its leader's term: propose again to the next leader.
    if (leader?.core!.leaderReady && leader.core!.term !== markerTerm) {
      const proposed = sim.proposeMarker();
      if (proposed !== null) {
        marker = proposed;
        markerTerm = leader.core!.term;
      }
    }
    return marker !== null && sim.allMembersApplied(marker);
  });
  if (done) return null;
  const leader = sim.leader();
  const state = sim.servers
    .map((s) => (s.core ? `${s.id}:${s.core.role}@${s.core.term} commit=${s.core.commitIndex} last=${s.core.lastIndex}` : `${s.id}:down`))
    .join(', ');
  return `no progress after healing for ${budget} units (leader ${leader?.id ?? 'none'}, marker ${marker}); ${state}`;
}
