// A write re-sent after a leader change is applied once. The deterministic Raft simulation (crashes,
// partitions, drops, compaction) runs with the real store as every server's state machine; a
// client model proposes KV writes under request ids and, whenever leadership moves before it sees
// its write applied, proposes the same request again at the new leader — what rpc.apply does.
// Both copies may then commit; the store's dedup window must apply the first and ignore the second,
// on every server, across snapshots and restarts.
import { decodeEntry, encodeEntry, Store, type Command } from '@registry/store';
import { SimCluster, type SimStateMachine } from '../../../raft/test/sim/sim-cluster';
import { chaosStep, healAndCheckLiveness, type RunSummary } from '../../../raft/test/sim/nemesis';

const ELECTION_TICKS = 10;

/** The store behind the simulation's state machine interface, counting copies of each request. */
class StoreMachine implements SimStateMachine {
  store = new Store({ now: () => 0 });
  /** How many committed copies of each request id this server saw in its log. */
  readonly copies = new Map<string, number>();

  apply(index: number, data: Uint8Array): void {
    let entry;
    try {
      entry = decodeEntry(data);
    } catch {
      return; // the simulation's own marker entries
    }
    if (entry.request) this.copies.set(entry.request.id, (this.copies.get(entry.request.id) ?? 0) + 1);
    this.store.apply(index, entry.cmd, entry.request);
  }

  snapshot(): Uint8Array {
    return this.store.snapshot();
  }

  restore(data: Uint8Array): void {
    this.store.restore(data);
  }
}

interface Outstanding {
  id: string;
  key: string;
  data: Uint8Array;
  /** The same request marked as a re-send. */
  again: Uint8Array;
  sent?: boolean;
  /** Term of the leader it was last proposed to. */
  term: number;
}

function runSeed(seed: number): { requests: number; resent: number; committedTwice: number } {
  const machines: StoreMachine[] = [];
  const sim = new SimCluster({
    seed,
    servers: 3,
    members: 3,
    dropRate: 0.05,
    maxDelay: 8,
    core: { electionTicks: ELECTION_TICKS },
    stateMachine: () => {
      const m = new StoreMachine();
      machines.push(m);
      return m;
    },
  });
  const summary: RunSummary = { crashes: 0, snapshots: 0, confChanges: 0, transfers: 0 };
  const outstanding: Outstanding[] = [];
  const requests: Outstanding[] = [];
  let resent = 0;
  let next = 0;

  // What the client can see: its key exists (deliberately not the dedup table under test).
  const written = (store: Store, r: Outstanding) => store.kvGet(r.key).value !== null;
  const leaderStore = () => (sim.leader()?.machine as StoreMachine | undefined)?.store;
  const propose = (r: Outstanding): void => {
    const at = sim.proposeData(r.sent ? r.again : r.data);
    r.sent = true;
    if (at) r.term = at.term;
  };

  for (let step = 0; step < 1500; step++) {
    chaosStep(sim, summary, { crashRate: 0.01 });
    if (step % 7 === 0 && next < 60) {
      const id = `client.${(next++).toString(36)}`;
      const key = `k/${id}`;
      const cmd: Command = { type: 'kv.apply', op: { Verb: 'set', Key: key, Value: new Uint8Array([1]), Flags: 0 } };
      const data = encodeEntry({ cmd, request: { id, at: step } });
      // Every copy after the first is marked as a re-send, as rpc.ts marks it.
      const again = encodeEntry({ cmd, request: { id, at: step, resent: true } });
      const r: Outstanding = { id, key, data, again, term: 0 };
      propose(r);
      outstanding.push(r);
      requests.push(r);
    }
    const leader = sim.leader();
    const store = leaderStore();
    if (!leader || !store) continue;
    for (let i = outstanding.length - 1; i >= 0; i--) {
      const r = outstanding[i];
      if (written(store, r)) outstanding.splice(i, 1);
      else if (leader.core!.term !== r.term) {
        propose(r); // the leader changed before the client saw its write: re-send, same id
        resent++;
      }
    }
  }
  // Heal, then keep re-sending what is still unconfirmed until every request is applied.
  const stuck = healAndCheckLiveness(sim, ELECTION_TICKS);
  if (stuck) throw new Error(`seed ${seed}: ${stuck}`);
  const done = sim.runUntil(20_000, () => {
    const store = leaderStore();
    const leader = sim.leader();
    if (!store || !leader) return false;
    for (const r of outstanding) if (!written(store, r) && leader.core!.term !== r.term) propose(r);
    return requests.every((r) => sim.alive.every((s) => written((s.machine as StoreMachine).store, r)));
  });
  if (!done) throw new Error(`seed ${seed}: not every request was applied on every server after healing`);

  let committedTwice = 0;
  for (const r of requests) {
    if (Math.max(...machines.map((m) => m.copies.get(r.id) ?? 0)) > 1) committedTwice++;
    for (const s of sim.alive) {
      const store = (s.machine as StoreMachine).store;
      const entry = store.kvGet(r.key).value;
      // Applied once: the key was written by exactly one entry (a second apply would move ModifyIndex).
      if (!entry) throw new Error(`seed ${seed}: ${s.id} lost ${r.key}`);
      if (entry.ModifyIndex !== entry.CreateIndex) {
        throw new Error(`seed ${seed}: ${s.id} applied ${r.id} twice (CreateIndex ${entry.CreateIndex}, ModifyIndex ${entry.ModifyIndex})`);
      }
      const problems = store.checkInvariants();
      if (problems.length > 0) throw new Error(`seed ${seed}: ${s.id}: ${problems.join('; ')}`);
    }
  }
  return { requests: requests.length, resent, committedTwice };
}

describe('a request re-sent after a leader change (Raft simulation with the real store)', () => {
  it('is applied exactly once on every server, across crashes, partitions and snapshots', () => {
    const totals = { requests: 0, resent: 0, committedTwice: 0 };
    for (let seed = 1; seed <= 60; seed++) {
      const r = runSeed(seed);
      totals.requests += r.requests;
      totals.resent += r.resent;
      totals.committedTwice += r.committedTwice;
    }
    // The faults must really have produced copies committed twice, or the test shows nothing.
    expect(totals.resent).toBeGreaterThan(0);
    expect(totals.committedTwice).toBeGreaterThan(0);
  });
});
