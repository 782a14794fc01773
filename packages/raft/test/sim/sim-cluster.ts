// A deterministic simulated cluster of RaftCores: a seeded clock, a lossy
// network that delays, duplicates and reorders, partitions, servers that
// crash and restart from a simulated disk holding only what a Ready handed
// over for persisting, and servers whose log is lost (restarting with the
// same id and only their term and vote). Every effect is checked by a
// SafetyChecker.
import { RaftCore, type CoreConfig } from '../../src/core/raft-core';
import { isVoter } from '../../src/core/configuration';
import { EntryType, type Configuration, type Entry, type HardState, type Message, type NodeId, type Ready, type SnapshotMeta } from '../../src/core/types';
import { Prng } from './prng';
import { SafetyChecker, SafetyViolation, entryIdentity, nextDigest } from './safety-checker';

const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();

/** Time advances in units; a server ticks once every TICK units (at its own phase). */
export const TICK = 10;

export interface SimOptions {
  seed: number;
  /** Servers that exist (n1..nN). */
  servers: number;
  /** The first `members` servers are bootstrapped as the initial configuration. */
  members: number;
  /** The last `learners` of those members are learners (non-voters); default 0. */
  learners?: number;
  dropRate?: number;
  duplicateRate?: number;
  /** Messages take 1..maxDelay units (more than one tick reorders them). */
  maxDelay?: number;
  /** Leaders send a Ready's messages before its disk write completes. */
  parallelWrites?: boolean;
  core?: Partial<Omit<CoreConfig, 'id' | 'random'>>;
  /** Called with a line per notable event when tracing a replay. */
  trace?: (line: string) => void;
  /**
   * A real state machine per server, fed every non-empty normal entry and carried in snapshots
   * (e.g. the store, to check that a request committed twice is applied once).
   */
  stateMachine?: () => SimStateMachine;
}

export interface SimStateMachine {
  apply(index: number, data: Uint8Array): void;
  snapshot(): Uint8Array;
  restore(data: Uint8Array): void;
}

interface Disk {
  hardState: HardState;
  snapshot?: { meta: SnapshotMeta; data: Uint8Array };
  /** Contiguous; may start at or below the snapshot's index (trailing entries kept by compaction). */
  entries: Entry[];
}

export interface SimServer {
  readonly id: NodeId;
  core: RaftCore | null;
  readonly disk: Disk;
  /** The state machine: how far it applied and a digest of everything applied. */
  applied: number;
  digest: number;
  /** Normal-entry payloads applied, for liveness checks. */
  appliedData: Set<string>;
  /** The optional real state machine (SimOptions.stateMachine). */
  machine?: SimStateMachine;
  phase: number;
  /** A leader's Ready already sent, its disk write still in progress until `doneAt`. */
  unfinished?: { rd: Ready; doneAt: number };
  /**
   * The highest index this server ever acknowledged to a leader, or counted for itself toward a
   * commit as leader (its persisted log): an entry committed with its help is at or below it.
   */
  maxAcknowledged: number;
  /**
   * Set by loseLog(): the server lost entries it acknowledged, so it neither votes nor campaigns
   * until its persisted commit index reaches `until` (its maxAcknowledged at the loss).
   */
  recovering?: { until: number };
}

/** What a run exercised, so a test can show its faults really happened. */
export interface SimStats {
  elections: number;
  snapshotsInstalled: number;
  readsServed: number;
  readsFailed: number;
  entriesApplied: number;
  /** loseLog() faults, and how many of those servers caught up and may vote again. */
  logsLost: number;
  logsRecovered: number;
}

export class SimCluster {
  readonly rng: Prng;
  readonly stats: SimStats = {
    elections: 0,
    snapshotsInstalled: 0,
    readsServed: 0,
    readsFailed: 0,
    entriesApplied: 0,
    logsLost: 0,
    logsRecovered: 0,
  };
  readonly checker = new SafetyChecker();
  readonly servers: SimServer[] = [];
  now = 0;
  dropRate: number;
  duplicateRate: number;
  maxDelay: number;
  parallelWrites: boolean;
  private readonly inFlight = new Map<number, Message[]>();
  /** Servers in different groups cannot exchange messages; undefined = no partition. */
  private groups: Map<NodeId, number> | undefined;
  private nextProposal = 1;
  private nextReadCtx = 1;
  private readonly coreConfig: Omit<CoreConfig, 'id' | 'random'>;
  private readonly trace: ((line: string) => void) | undefined;

  private readonly machineFactory?: () => SimStateMachine;

  constructor(options: SimOptions) {
    this.machineFactory = options.stateMachine;
    this.rng = new Prng(options.seed);
    this.dropRate = options.dropRate ?? 0;
    this.duplicateRate = options.duplicateRate ?? 0;
    this.maxDelay = options.maxDelay ?? 3;
    this.parallelWrites = options.parallelWrites ?? false;
    this.trace = options.trace;
    this.coreConfig = {
      electionTicks: 10,
      heartbeatTicks: 3,
      preVote: true,
      checkQuorum: true,
      maxInflight: 4,
      maxEntriesPerAppend: 3,
      // The proposals are a few bytes each and configurations ~100: these limits cut appends short
      // and hold the pipeline back by bytes as often as by count, under every fault the run draws.
      maxAppendBytes: 16,
      maxInflightBytes: 40,
      ...options.core,
    };
    const configuration: Configuration = { servers: [] };
    for (let i = 1; i <= options.servers; i++) {
      const id = `n${i}`;
      const learner = i <= options.members && i > options.members - (options.learners ?? 0);
      if (i <= options.members) configuration.servers.push(learner ? { id, address: `addr-${id}`, learner: true } : { id, address: `addr-${id}` });
      this.servers.push({
        id,
        core: null,
        disk: { hardState: { term: 0, vote: null, commit: 0 }, entries: [] },
        applied: 0,
        digest: 0,
        appliedData: new Set(),
        phase: this.rng.int(0, TICK - 1),
        maxAcknowledged: 0,
      });
    }
    for (const server of this.servers) {
      this.start(server);
      if (configuration.servers.some((s) => s.id === server.id)) server.core!.bootstrap(configuration);
    }
    this.processReadies();
  }

  server(id: NodeId): SimServer {
    const server = this.servers.find((s) => s.id === id);
    if (!server) throw new Error(`no server ${id}`);
    return server;
  }

  get alive(): SimServer[] {
    return this.servers.filter((s) => s.core !== null);
  }

  /** The live leader with the highest term (a deposed one may not know it yet). */
  leader(): SimServer | undefined {
    let best: SimServer | undefined;
    for (const s of this.alive) {
      if (s.core!.role === 'leader' && (!best || s.core!.term > best.core!.term)) best = s;
    }
    return best;
  }

  // ------------------------------------------------------------ time

  /** One time unit: deliver due messages, tick the servers whose phase it is, then run their Readies. */
  step(): void {
    this.deliverDue();
    this.tickDue();
    this.processReadies();
  }

  /** The first half of a step; a fault injected before processReadies() hits unpersisted state. */
  deliverAndTick(): void {
    this.deliverDue();
    this.tickDue();
  }

  run(units: number): void {
    for (let i = 0; i < units; i++) this.step();
  }

  /** Runs until `done` holds (checked after each unit) or `units` pass; returns whether it held. */
  runUntil(units: number, done: () => boolean): boolean {
    for (let i = 0; i < units; i++) {
      this.step();
      if (done()) return true;
    }
    return false;
  }

  private tickDue(): void {
    this.now++;
    for (const s of this.servers) {
      if (s.core && (this.now + s.phase) % TICK === 0) s.core.tick();
    }
  }

  // ------------------------------------------------------------ network

  private send(m: Message): void {
    if (this.rng.chance(this.dropRate) || this.cut(m.from, m.to)) return;
    if (isElectionMessage(m) && this.server(m.from).recovering) return; // it may not campaign
    this.schedule(m);
    if (this.rng.chance(this.duplicateRate)) this.schedule(m);
  }

  private schedule(m: Message): void {
    const at = this.now + this.rng.int(1, this.maxDelay);
    const due = this.inFlight.get(at);
    if (due) due.push(m);
    else this.inFlight.set(at, [m]);
  }

  private deliverDue(): void {
    const due = this.inFlight.get(this.now);
    if (!due) return;
    this.inFlight.delete(this.now);
    for (const m of due) {
      const to = this.servers.find((s) => s.id === m.to);
      if (!to?.core || this.cut(m.from, m.to)) continue;
      if (isElectionMessage(m) && to.recovering) continue; // nor vote
      to.core.step(m);
    }
  }

  private cut(a: NodeId, b: NodeId): boolean {
    return this.groups !== undefined && this.groups.get(a) !== this.groups.get(b);
  }

  partition(groups: NodeId[][]): void {
    this.groups = new Map();
    groups.forEach((group, i) => group.forEach((id) => this.groups!.set(id, i)));
    // A server named in no group is alone.
    this.servers.forEach((s, i) => {
      if (!this.groups!.has(s.id)) this.groups!.set(s.id, groups.length + i);
    });
    this.trace?.(`${this.now} partition ${groups.map((g) => g.join(',')).join(' | ')}`);
  }

  isolate(id: NodeId): void {
    this.partition([[id], this.servers.filter((s) => s.id !== id).map((s) => s.id)]);
  }

  heal(): void {
    this.groups = undefined;
    this.trace?.(`${this.now} heal`);
  }

  // ------------------------------------------------------------ servers

  /**
   * Loses everything not persisted. The pending Ready (if any) is lost, or reached the disk
   * but was never sent, or — a leader writing its log in parallel with replicating it (Raft
   * thesis §10.2.1) — was sent but never reached the disk.
   */
  crash(id: NodeId, pending: 'lost' | 'persisted' | 'sent' = 'lost'): void {
    const s = this.server(id);
    const core = s.core;
    if (!core) return;
    if (pending === 'persisted' && s.unfinished) {
      this.persist(s, s.unfinished.rd);
    } else if (pending !== 'lost' && !s.unfinished && core.hasReady()) {
      const wasLeader = core.role === 'leader';
      const rd = core.ready();
      // Only a leader that stays leader (no new term or vote to persist first) may send early.
      if (pending === 'persisted') this.persist(s, rd);
      else if (wasLeader && core.role === 'leader' && this.onlyCommitChanged(s, rd)) this.sendAll(s, rd);
    }
    s.core = null;
    s.unfinished = undefined; // its disk write never completed
    this.trace?.(`${this.now} crash ${id} (pending Ready ${pending})`);
  }

  private onlyCommitChanged(s: SimServer, rd: Ready): boolean {
    const hs = rd.hardState;
    return hs === undefined || (hs.term === s.disk.hardState.term && hs.vote === s.disk.hardState.vote);
  }

  restart(id: NodeId): void {
    const s = this.server(id);
    if (s.core) return;
    this.start(s);
    this.trace?.(`${this.now} restart ${id} term=${s.disk.hardState.term} commit=${s.disk.hardState.commit}`);
  }

  private start(s: SimServer): void {
    const snapshot = s.disk.snapshot;
    // The state machine is in memory: it restarts from the snapshot and replays the log.
    if (snapshot) this.restoreStateMachine(s, snapshot.data);
    else {
      s.applied = 0;
      s.digest = 0;
      s.appliedData = new Set();
      s.machine = this.machineFactory?.();
    }
    s.core = new RaftCore(
      { id: s.id, random: () => this.rng.next(), ...this.coreConfig },
      { hardState: { ...s.disk.hardState }, snapshot: snapshot?.meta, entries: s.disk.entries.slice() },
    );
  }

  /**
   * The server loses its log, snapshot and state machine (a wiped or replaced data disk) and
   * restarts with the same id, keeping only its term and vote — "log lost, hard state kept".
   * (A lost vote could elect two leaders in a term: the server layer must keep it, or keep the
   * server from voting in any term it may have voted in.) Such a server may have acknowledged
   * entries it no longer holds, and an entry committed with its acknowledgement may be on no
   * other server of a later election's majority: were it to vote, a leader without a committed
   * entry could be elected. So, as the server layer must, the simulation keeps it out of
   * elections — no vote requests in or out — until its commit index reaches the highest index
   * it ever acknowledged: then every entry it acknowledged is either in its log and committed,
   * or conflicts with a committed one and can never be committed. (The other servers' majority
   * alone elects leaders meanwhile; the entries committed without it are on some of them.)
   * Replication must bring it back; that is what this fault tests.
   */
  loseLog(id: NodeId): void {
    const s = this.server(id);
    if (s.core) this.crash(id, 'lost');
    const disk = s.disk;
    s.recovering = { until: Math.max(s.maxAcknowledged, s.recovering?.until ?? 0) };
    disk.entries = [];
    disk.snapshot = undefined;
    disk.hardState = { term: disk.hardState.term, vote: disk.hardState.vote, commit: 0 };
    this.stats.logsLost++;
    this.trace?.(`${this.now} lose-log ${id} (term=${disk.hardState.term} vote=${disk.hardState.vote}; no elections until commit ${s.recovering.until})`);
    this.restart(id);
  }

  /** Is a server still recovering from loseLog()? */
  recovering(): boolean {
    return this.servers.some((s) => s.recovering);
  }

  /**
   * No membership change under way: every member of the configuration the leader has committed
   * is up and has that configuration as its latest.
   */
  membershipSettled(): boolean {
    const leader = this.leader();
    if (!leader) return false;
    const committed = leader.core!.configurationAt(leader.core!.commitIndex);
    const voters = (c: Configuration) => c.servers.map((m) => `${m.id}${m.learner ? '~' : ''}`).sort().join(',');
    return committed.servers.every((m) => {
      const core = this.server(m.id).core;
      return core !== null && voters(core.configuration) === voters(committed);
    });
  }

  /** The driver's snapshot at the applied index, keeping a few trailing entries. */
  compact(id: NodeId, trailing: number): void {
    const s = this.server(id);
    const core = s.core;
    if (!core || s.applied <= (s.disk.snapshot?.meta.index ?? 0)) return;
    const meta = core.snapshotMeta(s.applied);
    if (!meta) return;
    const machine = s.machine ? Buffer.from(s.machine.snapshot()).toString('base64') : undefined;
    const data = utf8Encoder.encode(JSON.stringify({ index: s.applied, digest: s.digest, data: [...s.appliedData], machine }));
    const compactTo = Math.max(0, s.applied - trailing);
    s.disk.snapshot = { meta, data };
    const first = s.disk.entries[0]?.index ?? 0;
    if (compactTo >= first) s.disk.entries = s.disk.entries.slice(compactTo - first + 1);
    core.compact(meta, compactTo);
    this.trace?.(`${this.now} compact ${id} snapshot=${meta.index} compactTo=${compactTo}`);
  }

  propose(count = 1): number[] | null {
    const leader = this.leader();
    if (!leader) return null;
    const ids: number[] = [];
    for (let i = 0; i < count; i++) ids.push(this.nextProposal++);
    const positions = leader.core!.propose(ids.map((n) => utf8Encoder.encode(String(n))));
    return positions ? ids : null;
  }

  /** Propose one entry with these bytes on the current leader; its position, or null without one. */
  proposeData(data: Uint8Array): { index: number; term: number } | null {
    const leader = this.leader();
    const positions = leader?.core!.propose([data]);
    return positions ? positions[0] : null;
  }

  read(id: NodeId): void {
    const s = this.server(id);
    if (!s.core) return;
    const ctx = this.nextReadCtx++;
    this.checker.onReadIssued(id, ctx);
    s.core.readIndex(ctx);
  }

  // ------------------------------------------------------------ the driver

  /**
   * Runs every server's Readies. A leader whose Ready needs no new term or vote on disk may,
   * when `parallelWrites` is on, send first and persist at the next step (Raft thesis §10.2.1):
   * acknowledgements can then arrive before its own write is done.
   */
  processReadies(): void {
    for (const s of this.servers) {
      if (s.unfinished && this.now >= s.unfinished.doneAt) this.finish(s, s.unfinished.rd);
      for (let rounds = 0; s.core && !s.unfinished && s.core.hasReady(); rounds++) {
        if (rounds > 50) throw new Error(`${s.id} keeps producing Readies`);
        const rd = s.core.ready();
        this.observe(s, rd);
        if (this.parallelWrites && s.core.role === 'leader' && this.onlyCommitChanged(s, rd)) {
          this.sendAll(s, rd);
          s.unfinished = { rd, doneAt: this.now + this.rng.int(1, 2 * this.maxDelay) };
        } else {
          this.persist(s, rd);
          this.sendAll(s, rd);
          this.finish(s, rd);
        }
      }
    }
  }

  private observe(s: SimServer, rd: Ready): void {
    const core = s.core!;
    if (!rd.softState) return;
    this.trace?.(`${this.now} ${s.id} ${rd.softState.role} term=${rd.softState.term} leader=${rd.softState.leader}`);
    if (rd.softState.role === 'leader') {
      this.stats.elections++;
      this.checker.onLeader(s.id, core.term);
      // A learner never stands for election (it is not asked to either: no vote request goes to it).
      if (!isVoter(core.configuration, s.id)) this.checker.fail(`${s.id} became leader of term ${core.term} while not a voter`);
      this.checker.checkLeaderCompleteness(s.id, core.term, core.lastIndex, (i) => core.termAt(i));
    }
  }

  /** Persists (if sent early), applies, releases reads and advances. */
  private finish(s: SimServer, rd: Ready): void {
    if (s.unfinished?.rd === rd) {
      s.unfinished = undefined;
      this.persist(s, rd);
    }
    this.apply(s, rd);
    for (const r of rd.readStates) this.checker.onReadState(s.id, r.ctx, r.index);
    for (const ctx of rd.failedReads) this.checker.onReadFailed(ctx);
    this.stats.readsServed += rd.readStates.length;
    this.stats.readsFailed += rd.failedReads.length;
    this.stats.entriesApplied += rd.committed.length;
    if (rd.snapshot) this.stats.snapshotsInstalled++;
    s.core!.advance(rd);
    // A leader counts its own persisted log toward commitment: it acknowledges it to itself.
    if (s.core!.role === 'leader') s.maxAcknowledged = Math.max(s.maxAcknowledged, this.lastOnDisk(s));
    if (s.recovering && s.disk.hardState.commit >= s.recovering.until) {
      s.recovering = undefined;
      this.stats.logsRecovered++;
      this.trace?.(`${this.now} ${s.id} caught up after losing its log (commit ${s.disk.hardState.commit})`);
    }
  }

  private sendAll(s: SimServer, rd: Ready): void {
    for (const m of rd.messages) {
      if (m.type === 'appendResp' && m.success) s.maxAcknowledged = Math.max(s.maxAcknowledged, m.matchIndex);
      if (m.type === 'snapshot') {
        // The driver attaches the snapshot it holds now, which may be newer than the one named
        // when the message was made (meta and data always travel together).
        const held = s.disk.snapshot;
        if (!held || held.meta.index < m.meta.index) throw new SafetyViolation(`${s.id} sent a snapshot it does not hold`);
        this.send({ ...m, meta: held.meta, data: held.data });
      } else {
        this.send(m);
      }
    }
  }

  private persist(s: SimServer, rd: Ready): void {
    const disk = s.disk;
    if (rd.snapshot) {
      // The simulation sends snapshots whole; none here comes without its data.
      disk.snapshot = { meta: rd.snapshot.meta, data: rd.snapshot.data ?? new Uint8Array(0) };
      disk.entries = []; // the log is replaced by the snapshot
      this.restoreStateMachine(s, disk.snapshot.data);
      if (s.applied !== rd.snapshot.meta.index) throw new SafetyViolation(`${s.id}: snapshot data does not match its meta`);
    }
    if (rd.hardState) {
      this.checker.onHardState(s.id, disk.hardState, rd.hardState);
      disk.hardState = { ...rd.hardState };
    }
    if (rd.entries.length > 0) {
      const first = rd.entries[0].index;
      const start = disk.entries[0]?.index ?? first;
      const floor = disk.snapshot?.meta.index ?? 0;
      if (first > start + disk.entries.length || (disk.entries.length === 0 && first !== floor + 1)) {
        throw new SafetyViolation(`${s.id}: Ready entries from ${first} leave a gap on disk`);
      }
      disk.entries = disk.entries.slice(0, Math.max(0, first - start)).concat(rd.entries);
      for (const entry of rd.entries) this.checker.onEntryPersisted(s.id, entry, this.termOnDisk(s, entry.index - 1));
    }
    const last = disk.entries.length > 0 ? disk.entries[disk.entries.length - 1].index : (disk.snapshot?.meta.index ?? 0);
    if (disk.hardState.commit > last) throw new SafetyViolation(`${s.id}: commit ${disk.hardState.commit} beyond its log ${last} on disk`);
  }

  private lastOnDisk(s: SimServer): number {
    const entries = s.disk.entries;
    return entries.length > 0 ? entries[entries.length - 1].index : (s.disk.snapshot?.meta.index ?? 0);
  }

  private termOnDisk(s: SimServer, index: number): number {
    if (index === 0) return 0;
    const first = s.disk.entries[0]?.index;
    if (first !== undefined && index >= first && index - first < s.disk.entries.length) return s.disk.entries[index - first].term;
    if (s.disk.snapshot?.meta.index === index) return s.disk.snapshot.meta.term;
    throw new SafetyViolation(`${s.id}: entry ${index} is neither on disk nor the snapshot point`);
  }

  private apply(s: SimServer, rd: Ready): void {
    const term = s.core!.term;
    for (const entry of rd.committed) {
      if (entry.index !== s.applied + 1) {
        throw new SafetyViolation(`${s.id}: applied ${entry.index} after ${s.applied} (committed entries must come in order, once)`);
      }
      if (this.termOnDisk(s, entry.index) !== entry.term) throw new SafetyViolation(`${s.id}: applied ${entry.index} before persisting it`);
      this.checker.onCommitted(s.id, entry, term);
      s.applied = entry.index;
      s.digest = nextDigest(s.digest, entryIdentity(entry));
      if (entry.type === EntryType.Normal) s.appliedData.add(utf8.decode(entry.data));
      if (entry.type === EntryType.Normal && entry.data.length > 0) s.machine?.apply(entry.index, entry.data);
      this.checker.onApplied(s.id, s.applied, s.digest);
    }
  }

  private restoreStateMachine(s: SimServer, data: Uint8Array): void {
    const state = JSON.parse(utf8.decode(data)) as { index: number; digest: number; data: string[]; machine?: string };
    s.applied = state.index;
    s.digest = state.digest;
    s.appliedData = new Set(state.data);
    s.machine = this.machineFactory?.();
    if (state.machine !== undefined) s.machine?.restore(Buffer.from(state.machine, 'base64'));
    this.checker.onApplied(s.id, s.applied, s.digest);
  }

  /** Liveness after healing: a leader of the latest configuration commits `data`, and every member applies it. */
  allMembersApplied(data: string): boolean {
    const leader = this.leader();
    if (!leader) return false;
    return leader.core!.configuration.servers.every((m) => this.server(m.id).appliedData.has(data));
  }

  proposeMarker(): string | null {
    const ids = this.propose(1);
    return ids ? String(ids[0]) : null;
  }
}

function isElectionMessage(m: Message): boolean {
  return m.type === 'prevote' || m.type === 'vote' || m.type === 'prevoteResp' || m.type === 'voteResp';
}
