// The Raft consensus state machine (Ongaro & Ousterhout; Raft thesis), in
// etcd-io/raft's shape: no timers, no I/O, no randomness except the injected
// `random`. The driver feeds it ticks and messages and carries out the Ready
// batches it hands back (persist, send, apply), then calls advance().
//
// This file is the role state machine — step, tick, elections, replication —
// and the public API. Around it, as in etcd-io/raft: tracker.ts (followers'
// progress, votes, quorum questions), read-only.ts (ReadIndex), raw-node.ts
// (Ready assembly), log.ts and configuration-history.ts (what the log holds).
//
// Why ~900 lines in one file: what is left is step() and the transitions it dispatches to, which
// read as one table (etcd-io/raft keeps the same in one raft.go of ~2,000 lines); everything that
// could stand alone has moved out.
import {
  applyConfChange,
  encodeConfiguration,
  decodeConfiguration,
  isVoter,
  memberIds,
  voterIds,
  EMPTY_CONFIGURATION,
  type ConfChange,
} from './configuration';
import { ConfigurationHistory } from './configuration-history';
import { RaftLog } from './log';
import type { Progress } from './progress';
import { ForwardedReads, ReadOnly, type PendingRead } from './read-only';
import { RawNode } from './raw-node';
import { ProgressTracker } from './tracker';
import {
  EntryType,
  type Configuration,
  type Entry,
  type HardState,
  type Message,
  type NodeId,
  type Ready,
  type Role,
  type SnapshotMeta,
  type SoftState,
} from './types';

export interface CoreConfig {
  id: NodeId;
  /** Election timeout randomised in [electionTicks, 2*electionTicks). */
  electionTicks: number;
  /** Leader heartbeat interval, in ticks. */
  heartbeatTicks: number;
  preVote: boolean;
  checkQuorum: boolean;
  /** Max un-acked append messages in flight per follower (pipelining). */
  maxInflight: number;
  /** Max entry payload bytes in those messages; the one that crosses it still goes. */
  maxInflightBytes: number;
  maxEntriesPerAppend: number;
  /** Max entry payload bytes in one append (a single larger entry still goes, alone). */
  maxAppendBytes: number;
  /** In [0,1). */
  random: () => number;
}

/** What the driver loaded from disk (empty for a new server). */
export interface CoreRestore {
  hardState: HardState;
  snapshot?: SnapshotMeta;
  /** Entries after snapshot.index, in order (entries at or below it are ignored). */
  entries: Entry[];
  /**
   * The last index the driver's state machine already holds (a persistent FSM).
   * Defaults to snapshot.index (or 0): committed entries after it are handed out again.
   */
  applied?: number;
}

export interface CoreStatus {
  id: NodeId;
  role: Role;
  term: number;
  leader: NodeId | null;
  commit: number;
  applied: number;
  lastIndex: number;
  progress?: Record<NodeId, { match: number; next: number }>;
}

type MessageOf<T extends Message['type']> = Extract<Message, { type: T }>;

export class RaftCore {
  readonly id: NodeId;
  private readonly cfg: CoreConfig;

  // Persistent state (HardState) and the role we play in the current term.
  private _term: number;
  private vote: NodeId | null;
  private _role: Role = 'follower';
  private _leader: NodeId | null = null;

  private readonly log: RaftLog;
  private readonly configs: ConfigurationHistory;
  private commit: number;
  /** The index of the no-op this node appended when it last became leader. */
  private noopIndex = 0;
  /** The newest snapshot the driver holds; sent to followers that need compacted entries. */
  private latestSnapshot: SnapshotMeta | undefined;

  /** Output waiting for the next Ready, and what the driver has applied. */
  private readonly raw: RawNode;

  // Clocks, all in ticks.
  private now = 0;
  private electionElapsed = 0;
  private heartbeatElapsed = 0;
  private randomizedElectionTimeout = 0;
  private leaderContact = Number.POSITIVE_INFINITY;

  /** Candidate: the votes; leader: every follower's progress. */
  private readonly tracker: ProgressTracker;

  // Leader state.
  private transferee: NodeId | null = null;
  private transferElapsed = 0;
  private readonly readOnly = new ReadOnly();
  private appendWanted = false;
  private commitWanted = false;
  /**
   * The last send stamp (Message `seq`) put on an append, heartbeat or snapshot; it only grows
   * (across terms too), so an answer echoing a stamp above a follower's `matchedAt` answers a
   * message sent after the leader recorded that follower's match.
   */
  private sendStamp = 0;

  // Follower state.
  private readonly forwardedReads = new ForwardedReads();
  /**
   * False while the driver keeps this server out of elections (issue #16: it started without the
   * state it may have had — entries it acknowledged, a vote it cast — and has not caught up yet).
   */
  private electionsAllowed = true;

  constructor(config: CoreConfig, restore: CoreRestore) {
    if (config.electionTicks <= config.heartbeatTicks || config.heartbeatTicks < 1) {
      throw new Error('electionTicks must exceed heartbeatTicks, which must be at least 1');
    }
    this.id = config.id;
    this.cfg = config;
    this.tracker = new ProgressTracker(
      config.id,
      () => voterIds(this.configs.latest),
      () => memberIds(this.configs.latest),
      { count: config.maxInflight, bytes: config.maxInflightBytes },
    );
    const snapshot = restore.snapshot;
    const offsetIndex = snapshot?.index ?? 0;
    const offsetTerm = snapshot?.term ?? 0;
    this.log = new RaftLog(offsetIndex, offsetTerm, restoredEntries(restore.entries, offsetIndex, offsetTerm));
    this.configs = new ConfigurationHistory(snapshot?.configuration ?? EMPTY_CONFIGURATION);
    for (let i = this.log.firstIndex; i <= this.log.lastIndex; i++) this.recordIfConfig(this.log.entryAt(i)!);
    this.latestSnapshot = snapshot;
    this._term = restore.hardState.term;
    this.vote = restore.hardState.vote;
    this.commit = Math.min(Math.max(restore.hardState.commit, offsetIndex), this.log.lastIndex);
    const applied = Math.min(Math.max(restore.applied ?? offsetIndex, offsetIndex), this.commit);
    this.raw = new RawNode(this.log, applied, this.softState(), { ...restore.hardState });
    this.resetElectionTimer();
  }

  // ---------------------------------------------------------------- accessors

  get role(): Role {
    return this._role;
  }

  get term(): number {
    return this._term;
  }

  get leader(): NodeId | null {
    return this._leader;
  }

  get commitIndex(): number {
    return this.commit;
  }

  get lastIndex(): number {
    return this.log.lastIndex;
  }

  get appliedIndex(): number {
    return this.raw.applied;
  }

  /** The latest configuration in the log (in force as soon as it is appended, Raft thesis §4.1). */
  get configuration(): Configuration {
    return this.configs.latest;
  }

  /** True once this leader has committed an entry of its own term (its no-op); only then may it serve reads. */
  get leaderReady(): boolean {
    return this._role === 'leader' && this.log.termAt(this.commit) === this._term;
  }

  /**
   * The index of this leader's no-op (0 when not leading): once the state machine has applied it,
   * it holds everything any earlier leader committed — a write acknowledged before a restart too.
   */
  get leaderNoopIndex(): number {
    return this._role === 'leader' ? this.noopIndex : 0;
  }

  /** A leader's record of how far a follower's log matches its own (0 when unknown or not leading). */
  matchOf(id: NodeId): number {
    return this._role === 'leader' ? (this.tracker.get(id)?.match ?? 0) : 0;
  }

  /** Ticks since this node last heard from a leader: 0 on the leader itself, Infinity if never. */
  get ticksSinceLeaderContact(): number {
    return this._role === 'leader' ? 0 : this.leaderContact;
  }

  /** The term of the entry at `index`, or undefined when compacted away or beyond the log. */
  termAt(index: number): number | undefined {
    return this.log.termAt(index);
  }

  /** The first index still in the log: those before it are only in the snapshot. */
  get firstIndex(): number {
    return this.log.firstIndex;
  }

  /** The configuration in force at `index` (meaningful from the compaction point on). */
  configurationAt(index: number): Configuration {
    return this.configs.at(index);
  }

  /**
   * The meta a snapshot of the state machine at `index` (≤ applied) must carry; undefined when
   * the entry is no longer in the log (a newer snapshot from the leader is on its way to the
   * driver): skip this snapshot.
   */
  snapshotMeta(index: number): SnapshotMeta | undefined {
    const term = this.log.termAt(index);
    if (term === undefined) return undefined;
    return { index, term, configuration: this.configs.at(index) };
  }

  status(): CoreStatus {
    const status: CoreStatus = {
      id: this.id,
      role: this._role,
      term: this._term,
      leader: this._leader,
      commit: this.commit,
      applied: this.raw.applied,
      lastIndex: this.log.lastIndex,
    };
    if (this._role === 'leader') {
      const progress: Record<NodeId, { match: number; next: number }> = {
        [this.id]: { match: this.log.persisted, next: this.log.lastIndex + 1 },
      };
      for (const pr of this.tracker.followers()) progress[pr.id] = { match: pr.match, next: pr.next };
      status.progress = progress;
    }
    return status;
  }

  // ---------------------------------------------------------------- inputs

  /** Only on an empty log: writes the initial configuration as entry 1 of term 1. */
  bootstrap(configuration: Configuration): void {
    if (this.log.lastIndex !== 0 || this._term !== 0) throw new Error('bootstrap needs an empty log and term 0');
    if (configuration.servers.length === 0) throw new Error('bootstrap needs at least one server');
    this._term = 1;
    this.vote = null;
    const entry: Entry = { term: 1, index: 1, type: EntryType.Config, data: encodeConfiguration(configuration) };
    this.log.append([entry]);
    this.recordIfConfig(entry);
  }

  /**
   * Keeps this server out of elections (false) or lets it back in (true). Out of them it neither
   * campaigns, nor answers pre-vote or vote requests, nor obeys timeoutNow; it still follows a
   * leader, acknowledges appends and forwards reads. A server that may have lost entries it
   * acknowledged, or a vote it cast, must stay out until it has caught up (docs/raft.md).
   */
  setElectionsAllowed(allowed: boolean): void {
    this.electionsAllowed = allowed;
  }

  get inElections(): boolean {
    return this.electionsAllowed;
  }

  tick(): void {
    this.now++;
    if (this._role === 'leader') this.tickLeader();
    else this.tickElection();
  }

  step(m: Message): void {
    if (m.to !== this.id) return;
    // Out of elections: such a request is dropped unanswered, its term unseen (a lost message).
    if (!this.electionsAllowed && (m.type === 'vote' || m.type === 'prevote' || m.type === 'timeoutNow')) return;
    if (m.term > this._term) {
      if (m.type === 'vote' || m.type === 'prevote') {
        // Leader stickiness: while we hear from a leader, a vote request is a disruption
        // (a rejoining or removed server), unless the leader itself asked for it (timeoutNow).
        const sticky = m.type === 'prevote' || this.cfg.checkQuorum;
        const transfer = m.type === 'vote' && m.transfer === true;
        if (sticky && !transfer && this.inLease()) return;
      }
      if (m.type === 'prevote' || (m.type === 'prevoteResp' && m.granted)) {
        // Pre-vote messages carry the term a pre-candidate would have; they change nothing.
      } else {
        const fromLeader = m.type === 'append' || m.type === 'heartbeat' || m.type === 'snapshot';
        this.becomeFollower(m.term, fromLeader ? m.from : null);
      }
    } else if (m.term < this._term) {
      this.answerStale(m);
      return;
    }

    if (this._role === 'leader') {
      const pr = this.tracker.get(m.from);
      if (pr) pr.recentActive = true;
    }

    switch (m.type) {
      case 'prevote':
      case 'vote':
        this.handleVoteRequest(m);
        return;
      case 'append':
      case 'heartbeat':
      case 'snapshot':
        if (this._role === 'leader') return; // another leader in our term cannot exist
        if (this._role !== 'follower') this.becomeFollower(m.term, m.from);
        this.heardFromLeader(m.from);
        if (m.type === 'append') this.handleAppend(m);
        else if (m.type === 'heartbeat') this.handleHeartbeat(m);
        else this.handleSnapshot(m);
        return;
      case 'appendResp':
        if (this._role === 'leader') this.handleAppendResp(m);
        return;
      case 'heartbeatResp':
        if (this._role === 'leader') this.handleHeartbeatResp(m);
        return;
      case 'prevoteResp':
        // A grant carries the term we would campaign in; anything else is from an older round.
        if (this._role === 'pre-candidate' && m.granted === (m.term === this._term + 1)) {
          this.countVote(m.from, m.granted);
        }
        return;
      case 'voteResp':
        if (this._role === 'candidate') this.countVote(m.from, m.granted);
        return;
      case 'timeoutNow':
        if (this._role === 'follower' && this.promotable()) this.becomeCandidate(true);
        return;
      case 'readIndex':
        this.handleForwardedRead(m);
        return;
      case 'readIndexResp':
        this.handleReadIndexResp(m);
        return;
    }
  }

  /** Leader only: appends entries in the current term; null when not leader or while transferring. */
  propose(data: Uint8Array[]): { index: number; term: number }[] | null {
    if (this._role !== 'leader' || this.transferee !== null) return null;
    const positions: { index: number; term: number }[] = [];
    const entries: Entry[] = [];
    let index = this.log.lastIndex;
    for (const d of data) {
      index++;
      entries.push({ term: this._term, index, type: EntryType.Normal, data: d });
      positions.push({ index, term: this._term });
    }
    this.appendAsLeader(entries);
    return positions;
  }

  /**
   * Leader only, one change at a time: null when not leader, transferring, not yet ready
   * (no entry of its term committed), a change is still uncommitted, or the change would
   * leave no voter.
   */
  /**
   * A leader cannot take a configuration change yet, for a reason that passes by itself: its term's
   * first entry is not committed, the previous change is not, or leadership is being handed over.
   */
  get confChangeWaiting(): boolean {
    return this._role === 'leader' && (this.transferee !== null || !this.leaderReady || this.configs.latestIndex > this.commit);
  }

  proposeConfChange(change: ConfChange): { index: number; term: number } | null {
    if (this._role !== 'leader' || this.transferee !== null || !this.leaderReady) return null;
    if (this.configs.latestIndex > this.commit) return null;
    const next = applyConfChange(this.configs.latest, change);
    if (voterIds(next).length === 0) return null;
    const index = this.log.lastIndex + 1;
    this.appendAsLeader([{ term: this._term, index, type: EntryType.Config, data: encodeConfiguration(next) }]);
    return { index, term: this._term };
  }

  /** Linearizable read (ReadIndex): answered in Ready.readStates or Ready.failedReads. */
  readIndex(ctx: number): void {
    if (this._role === 'leader') {
      this.acceptRead(ctx, this.id);
    } else if (this._role === 'follower' && this._leader !== null) {
      this.send({ type: 'readIndex', to: this._leader, term: this._term, ctx });
      this.forwardedReads.add(ctx, this.now);
    } else {
      this.raw.addFailedRead(ctx);
    }
  }

  /** Hands leadership to `to` (or the most up-to-date follower): catch it up, then timeoutNow. */
  transferLeadership(to?: NodeId): void {
    if (this._role !== 'leader') return;
    const target = to ?? this.tracker.mostUpToDate();
    if (target === undefined || target === this.id || target === this.transferee) return;
    const pr = this.tracker.get(target);
    if (!pr || !this.tracker.isVoter(target)) return; // a learner cannot stand for election
    this.transferee = target;
    this.transferElapsed = 0;
    if (pr.match === this.log.lastIndex) this.send({ type: 'timeoutNow', to: target, term: this._term });
    else this.sendAppends(target, false);
  }

  /** Starts an election now, skipping pre-vote (a no-op on a leader or a non-member). */
  campaign(): void {
    if (this._role === 'leader' || !this.promotable()) return;
    this.becomeCandidate(false);
  }

  /**
   * The driver took a snapshot at meta.index (≤ applied): entries ≤ compactTo are dropped and
   * followers that need them get this snapshot instead.
   */
  compact(meta: SnapshotMeta, compactTo: number): void {
    const applied = this.raw.applied;
    if (meta.index > applied) throw new Error(`snapshot at ${meta.index} is ahead of applied ${applied}`);
    if (!this.latestSnapshot || meta.index > this.latestSnapshot.index) this.latestSnapshot = meta;
    const to = Math.min(compactTo, meta.index, applied, this.log.persisted);
    if (to <= this.log.compactedIndex) return;
    this.configs.compact(to);
    this.log.compact(to);
  }

  // ---------------------------------------------------------------- Ready (raw-node.ts)

  hasReady(): boolean {
    return (
      this.raw.hasReady(this.commit, this.softState(), this.hardState()) ||
      (this._role === 'leader' && (this.appendWanted || this.commitWanted || this.readOnly.roundWanted))
    );
  }

  ready(): Ready {
    // Batched sends leave now, so that the Ready carries them.
    if (this._role === 'leader') this.flushLeaderSends();
    return this.raw.ready(this.commit, this.softState(), this.hardState());
  }

  /** The driver persisted, sent and applied everything in `rd`. */
  advance(rd: Ready): void {
    this.raw.advance(rd);
    // The leader's own write counts toward the quorum only once it is on disk.
    if (this._role === 'leader') this.maybeCommit();
  }

  // ---------------------------------------------------------------- roles

  private becomeFollower(term: number, leader: NodeId | null): void {
    const wasLeader = this._role === 'leader';
    if (term !== this._term) {
      this._term = term;
      this.vote = null;
    }
    this._role = 'follower';
    this.setLeader(leader);
    this.resetElectionTimer();
    if (wasLeader) this.stopLeading();
  }

  private becomePreCandidate(): void {
    this._role = 'pre-candidate';
    this.setLeader(null);
    this.resetElectionTimer();
    this.tracker.resetVotes();
    for (const id of this.otherVoters()) {
      this.send({ type: 'prevote', to: id, term: this._term + 1, lastIndex: this.log.lastIndex, lastTerm: this.log.lastTerm });
    }
    this.countVote(this.id, true);
  }

  private becomeCandidate(transfer: boolean): void {
    this._term++;
    this.vote = this.id;
    this._role = 'candidate';
    this.setLeader(null);
    this.resetElectionTimer();
    this.tracker.resetVotes();
    for (const id of this.otherVoters()) {
      const request: MessageOf<'vote'> = {
        type: 'vote',
        from: this.id,
        to: id,
        term: this._term,
        lastIndex: this.log.lastIndex,
        lastTerm: this.log.lastTerm,
      };
      if (transfer) request.transfer = true;
      this.raw.addMessage(request);
    }
    this.countVote(this.id, true);
  }

  private becomeLeader(): void {
    this._role = 'leader';
    this.setLeader(this.id);
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.transferee = null;
    this.tracker.reset();
    this.syncProgress();
    // Raft §8: a leader learns what is committed only by committing an entry of its own term.
    this.noopIndex = this.log.lastIndex + 1;
    this.appendAsLeader([{ term: this._term, index: this.noopIndex, type: EntryType.Noop, data: new Uint8Array(0) }]);
  }

  private stopLeading(): void {
    this.tracker.reset();
    this.transferee = null;
    this.appendWanted = this.commitWanted = false;
    for (const read of this.readOnly.reset()) this.answerRead(read, 0);
  }

  private countVote(from: NodeId, granted: boolean): void {
    this.tracker.recordVote(from, granted);
    const outcome = this.tracker.tallyVotes();
    if (outcome === 'won') {
      if (this._role === 'pre-candidate') this.becomeCandidate(false);
      else this.becomeLeader();
    } else if (outcome === 'lost') {
      this.becomeFollower(this._term, null);
    }
  }

  // ---------------------------------------------------------------- ticking

  private tickElection(): void {
    this.electionElapsed++;
    this.leaderContact++;
    this.expireForwardedReads();
    if (this.electionElapsed >= this.randomizedElectionTimeout && this.promotable()) {
      this.electionElapsed = 0;
      if (this.cfg.preVote) this.becomePreCandidate();
      else this.becomeCandidate(false);
    }
  }

  private tickLeader(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.transferee !== null && ++this.transferElapsed >= this.cfg.electionTicks) {
      this.transferee = null; // the target did not take over in time: accept proposals again
    }
    if (this.electionElapsed >= this.cfg.electionTicks) {
      this.electionElapsed = 0;
      if (this.cfg.checkQuorum && !this.tracker.quorumActive()) {
        this.becomeFollower(this._term, null);
        return;
      }
      this.tracker.resetRecentActive();
    }
    if (this.heartbeatElapsed >= this.cfg.heartbeatTicks) {
      this.heartbeatElapsed = 0;
      this.broadcastHeartbeat(undefined);
    }
  }

  private resetElectionTimer(): void {
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    const n = this.cfg.electionTicks;
    this.randomizedElectionTimeout = n + Math.min(n - 1, Math.floor(this.cfg.random() * n));
  }

  // ---------------------------------------------------------------- voting

  private handleVoteRequest(m: MessageOf<'vote'> | MessageOf<'prevote'>): void {
    const isPre = m.type === 'prevote';
    const canVote =
      this.vote === m.from || (this.vote === null && this._leader === null) || (isPre && m.term > this._term);
    const type = isPre ? 'prevoteResp' : 'voteResp';
    if (canVote && this.log.isUpToDate(m.lastIndex, m.lastTerm)) {
      this.send({ type, to: m.from, term: m.term, granted: true });
      if (!isPre) {
        this.vote = m.from;
        this.electionElapsed = 0;
      }
    } else {
      this.send({ type, to: m.from, term: this._term, granted: false });
    }
  }

  // ---------------------------------------------------------------- follower

  private handleAppend(m: MessageOf<'append'>): void {
    let prevIndex = m.prevIndex;
    let prevTerm = m.prevTerm;
    let entries = m.entries;
    if (prevIndex < this.commit) {
      // Entries at or below our commit index are already here (committed entries never change).
      const skip = this.commit - prevIndex;
      if (entries.length <= skip) {
        this.respondAppend(m, true, this.commit, 0);
        return;
      }
      entries = entries.slice(skip);
      prevIndex = this.commit;
      prevTerm = this.log.termAt(this.commit)!;
    }
    if (!this.log.matchTerm(prevIndex, prevTerm)) {
      this.respondAppend(m, false, prevIndex, this.rejectHint(prevIndex));
      return;
    }
    const lastNew = prevIndex + entries.length;
    const truncatedAfter = this.log.merge(entries);
    if (truncatedAfter !== null) {
      if (truncatedAfter < this.commit) throw new Error(`append would truncate committed entry ${truncatedAfter + 1}`);
      this.configs.truncateAfter(truncatedAfter);
      for (const entry of entries) if (entry.index > truncatedAfter) this.recordIfConfig(entry);
    }
    this.commitTo(Math.min(m.commit, lastNew));
    // Sent in the same Ready as the entries: the driver persists them before sending this.
    this.respondAppend(m, true, lastNew, 0);
  }

  /** Where the leader should retry: skip the whole conflicting term, never below our commit. */
  private rejectHint(prevIndex: number): number {
    if (prevIndex > this.log.lastIndex) return this.log.lastIndex + 1;
    const conflictTerm = this.log.termAt(prevIndex);
    let index = prevIndex;
    while (index - 1 > this.commit && this.log.termAt(index - 1) === conflictTerm) index--;
    return Math.min(index, prevIndex);
  }

  /** Answers the leader's append or snapshot `m`, echoing its stamp and telling our last index. */
  private respondAppend(m: MessageOf<'append'> | MessageOf<'snapshot'>, success: boolean, matchIndex: number, hint: number): void {
    const resp: MessageOf<'appendResp'> = {
      type: 'appendResp',
      from: this.id,
      to: m.from,
      term: this._term,
      success,
      matchIndex,
      hint,
      lastIndex: this.log.lastIndex,
    };
    if (m.seq !== undefined) resp.seq = m.seq;
    this.raw.addMessage(resp);
  }

  private handleHeartbeat(m: MessageOf<'heartbeat'>): void {
    // The leader never sends a commit index beyond what it knows we hold.
    this.commitTo(Math.min(m.commit, this.log.lastIndex));
    const resp: MessageOf<'heartbeatResp'> = { type: 'heartbeatResp', from: this.id, to: m.from, term: this._term };
    if (m.ctx !== undefined) resp.ctx = m.ctx;
    resp.lastIndex = this.log.lastIndex;
    if (m.seq !== undefined) resp.seq = m.seq;
    this.raw.addMessage(resp);
  }

  private handleSnapshot(m: MessageOf<'snapshot'>): void {
    const meta = m.meta;
    if (meta.index <= this.commit) {
      this.respondAppend(m, true, this.commit, 0);
      return;
    }
    if (this.log.matchTerm(meta.index, meta.term)) {
      // We already hold the snapshot's entries: just learn that they are committed.
      this.commitTo(meta.index);
    } else {
      this.log.resetTo(meta.index, meta.term);
      this.configs.reset(meta.configuration);
      this.commit = meta.index;
      this.latestSnapshot = meta;
      // No data when its pieces travelled apart (snapshot-transfer.ts): the driver holds them.
      this.raw.installSnapshot(meta, m.data);
    }
    this.respondAppend(m, true, meta.index, 0);
  }

  private heardFromLeader(from: NodeId): void {
    this.setLeader(from);
    this.electionElapsed = 0;
    this.leaderContact = 0;
  }

  private commitTo(index: number): void {
    if (index > this.commit) this.commit = index;
  }

  // ---------------------------------------------------------------- leader

  private appendAsLeader(entries: Entry[]): void {
    if (entries.length === 0) return;
    this.log.append(entries);
    for (const entry of entries) {
      if (this.recordIfConfig(entry)) this.syncProgress();
    }
    this.appendWanted = true;
  }

  /** Progress for exactly the other voters of the latest configuration. */
  private syncProgress(): void {
    for (const id of this.tracker.sync(this.log.lastIndex + 1)) this.readOnly.forget(id);
    if (this.transferee !== null && !this.tracker.get(this.transferee)) this.transferee = null;
  }

  /** Batching: proposals, commit news and read rounds since the last Ready go out once per follower. */
  private flushLeaderSends(): void {
    if (this.readOnly.roundWanted) this.broadcastHeartbeat(this.readOnly.startRound());
    if (this.appendWanted || this.commitWanted) {
      const withCommit = this.commitWanted;
      this.appendWanted = this.commitWanted = false;
      for (const pr of this.tracker.followers()) this.sendAppends(pr.id, withCommit);
    }
  }

  /** Sends as many appends as flow control allows; `allowEmpty` sends one even with no entries (to carry the commit index). */
  private sendAppends(to: NodeId, allowEmpty: boolean): void {
    let first = true;
    while (this.sendAppend(to, first && allowEmpty)) first = false;
  }

  /** One append (or a snapshot); true when it carried entries and another may follow. */
  private sendAppend(to: NodeId, allowEmpty: boolean): boolean {
    const pr = this.tracker.get(to);
    if (!pr || pr.paused) return false;
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.termAt(prevIndex);
    if (prevTerm === undefined) {
      this.sendSnapshot(pr);
      return false;
    }
    const entries = this.log.sliceForAppend(pr.next, this.cfg.maxEntriesPerAppend, this.cfg.maxAppendBytes);
    if (entries.length === 0 && !allowEmpty) return false;
    const seq = ++this.sendStamp;
    this.send({ type: 'append', to, term: this._term, prevIndex, prevTerm, entries, commit: this.commit, seq });
    pr.sent(entries.length > 0 ? entries[entries.length - 1].index : undefined, payloadBytes(entries));
    return entries.length > 0 && pr.state === 'replicate';
  }

  private sendSnapshot(pr: Progress): void {
    const meta = this.latestSnapshot;
    if (!meta) throw new Error(`follower ${pr.id} needs compacted entries but there is no snapshot`);
    pr.becomeSnapshot(meta.index, this.now);
    this.send({ type: 'snapshot', to: pr.id, term: this._term, meta, seq: ++this.sendStamp });
  }

  private broadcastHeartbeat(ctx: number | undefined): void {
    for (const pr of this.tracker.followers()) {
      const hb: MessageOf<'heartbeat'> = {
        type: 'heartbeat',
        from: this.id,
        to: pr.id,
        term: this._term,
        commit: Math.min(pr.match, this.commit),
        seq: ++this.sendStamp,
      };
      if (ctx !== undefined) hb.ctx = ctx;
      this.raw.addMessage(hb);
    }
  }

  private handleAppendResp(m: MessageOf<'appendResp'>): void {
    const pr = this.tracker.get(m.from);
    if (!pr) return;
    const lost = this.lostLog(pr, m);
    if (!m.success) {
      // On failure matchIndex carries the prevIndex that was rejected.
      if (lost || pr.rejected(m.matchIndex, m.hint)) this.sendAppends(m.from, true);
      return;
    }
    if (!pr.acknowledge(m.matchIndex, this.sendStamp)) return;
    if (pr.state === 'probe') pr.becomeReplicate();
    else if (pr.state === 'snapshot' && pr.match >= pr.pendingSnapshot) {
      pr.becomeProbe();
      pr.becomeReplicate();
    } else if (pr.state === 'replicate') pr.inflights.freeUpTo(pr.match);
    this.maybeCommit();
    if (this._role !== 'leader') return; // committing our own removal stepped us down
    this.sendAppends(m.from, false);
    if (m.from === this.transferee && pr.match === this.log.lastIndex) {
      this.send({ type: 'timeoutNow', to: m.from, term: this._term });
    }
  }

  private handleHeartbeatResp(m: MessageOf<'heartbeatResp'>): void {
    const pr = this.tracker.get(m.from);
    if (!pr) return;
    this.lostLog(pr, m); // then the lost entries (or a snapshot) are sent just below
    pr.probeSent = false;
    if (pr.state === 'replicate' && pr.inflights.full) pr.inflights.freeFirst();
    if (pr.state === 'snapshot' && this.now - pr.snapshotSentAt >= this.cfg.electionTicks) {
      pr.becomeProbe(); // the snapshot (or its answer) was probably lost: find out again
      pr.next = pr.match + 1;
    }
    if (pr.match < this.log.lastIndex) this.sendAppends(m.from, true);
    if (m.ctx !== undefined && this.readOnly.recvAck(m.from, m.ctx)) this.releaseReads();
  }

  /**
   * Issue #16 — a follower that lost its log (wiped disk, same id): does this answer show a log
   * shorter than the match index the follower acknowledged? Only an answer to a message sent
   * after that match was recorded counts: until the disk is lost a follower never loses an
   * entry it acknowledged to this leader (acknowledged entries match the leader's log, so
   * neither its appends nor its snapshots truncate them, and they were persisted before the
   * acknowledgement left), so such an answer cannot come from a healthy follower; an older
   * answer — delayed, duplicated, reordered — may predate the acknowledgement and is not
   * evidence (a rejection among them is then handled, or ignored, by Progress.rejected as
   * before). On evidence the follower's progress starts over from its real last index (a
   * snapshot follows if those entries are compacted); true when that happened.
   *
   * Lowering match never endangers safety (commit only moves up, and counts no follower
   * beyond what it acknowledged); whether a server that lost acknowledged entries may vote
   * or count toward a quorum before it has caught up is the server layer's question.
   */
  private lostLog(pr: Progress, m: MessageOf<'appendResp'> | MessageOf<'heartbeatResp'>): boolean {
    if (m.seq === undefined || m.lastIndex === undefined) return false;
    if (m.seq <= pr.matchedAt || m.lastIndex >= pr.match) return false;
    pr.lostLog(m.lastIndex, this.sendStamp);
    return true;
  }

  /** Commit = the highest index a quorum has persisted, if it is of our term (Raft §5.4.2). */
  private maybeCommit(): void {
    const index = this.tracker.committed(this.log.persisted);
    if (index <= this.commit || this.log.termAt(index) !== this._term) return;
    this.commit = index;
    this.commitWanted = true;
    if (!isVoter(this.configs.latest, this.id) && this.commit >= this.configs.latestIndex) {
      // Our removal is committed: hand over to a caught-up follower rather than wait for a timeout.
      const successor = this.tracker.mostUpToDate();
      if (successor !== undefined && this.tracker.get(successor)!.match === this.log.lastIndex) {
        this.send({ type: 'timeoutNow', to: successor, term: this._term });
      }
      this.flushLeaderSends(); // tell the others about the commit before going quiet
      this.becomeFollower(this._term, null);
    }
  }

  // ---------------------------------------------------------------- reads

  private acceptRead(ctx: number, from: NodeId): void {
    if (!this.leaderReady) {
      this.answerRead({ ctx, from, index: 0, round: 0 }, 0);
      return;
    }
    const voters = voterIds(this.configs.latest);
    if (voters.length === 1 && voters[0] === this.id) {
      this.answerRead({ ctx, from, index: this.commit, round: 0 }, this.commit);
      return;
    }
    this.readOnly.add(ctx, from, this.commit);
  }

  /** Serves the reads whose heartbeat round a majority (this leader included) has acknowledged. */
  private releaseReads(): void {
    const confirmed = (round: number) =>
      this.tracker.hasQuorum((id) => id === this.id || this.readOnly.ackedRound(id) >= round);
    for (const read of this.readOnly.release(confirmed)) this.answerRead(read, read.index);
  }

  /** index 0 means the read failed. */
  private answerRead(read: PendingRead, index: number): void {
    if (read.from === this.id) {
      if (index === 0) this.raw.addFailedRead(read.ctx);
      else this.raw.addReadState(read.ctx, index);
    } else {
      this.send({ type: 'readIndexResp', to: read.from, term: this._term, ctx: read.ctx, index });
    }
  }

  private handleForwardedRead(m: MessageOf<'readIndex'>): void {
    if (this._role === 'leader') this.acceptRead(m.ctx, m.from);
    else this.send({ type: 'readIndexResp', to: m.from, term: this._term, ctx: m.ctx, index: 0 });
  }

  private handleReadIndexResp(m: MessageOf<'readIndexResp'>): void {
    if (!this.forwardedReads.answered(m.ctx)) return;
    if (m.index === 0) this.raw.addFailedRead(m.ctx);
    else this.raw.addReadState(m.ctx, m.index);
  }

  private expireForwardedReads(): void {
    for (const ctx of this.forwardedReads.expire(this.now, this.cfg.electionTicks)) this.raw.addFailedRead(ctx);
  }

  private setLeader(leader: NodeId | null): void {
    if (leader === this._leader) return;
    this._leader = leader;
    // A read forwarded to the old leader will not be answered by the new one.
    for (const ctx of this.forwardedReads.takeAll()) this.raw.addFailedRead(ctx);
  }

  // ---------------------------------------------------------------- helpers

  /** A message from an older term: tell its sender about ours where that helps it move on. */
  private answerStale(m: Message): void {
    if ((this.cfg.checkQuorum || this.cfg.preVote) && (m.type === 'append' || m.type === 'heartbeat')) {
      // A deposed leader (or one we ignore because of stickiness) learns our term and steps down.
      this.send({ type: 'appendResp', to: m.from, term: this._term, success: false, matchIndex: 0, hint: 0 });
    } else if (m.type === 'prevote') {
      this.send({ type: 'prevoteResp', to: m.from, term: this._term, granted: false });
    } else if (m.type === 'readIndex') {
      this.send({ type: 'readIndexResp', to: m.from, term: this._term, ctx: m.ctx, index: 0 });
    }
  }

  private inLease(): boolean {
    return this._role === 'leader' || (this._leader !== null && this.leaderContact < this.cfg.electionTicks);
  }

  private promotable(): boolean {
    return this.electionsAllowed && isVoter(this.configs.latest, this.id);
  }

  private otherVoters(): NodeId[] {
    return voterIds(this.configs.latest).filter((id) => id !== this.id);
  }

  /** Tracks a Config entry's configuration from the moment it is in the log; true if it was one. */
  private recordIfConfig(entry: Entry): boolean {
    if (entry.type !== EntryType.Config) return false;
    this.configs.record(entry.index, decodeConfiguration(entry.data));
    return true;
  }

  private send(m: DistributiveOmit<Message, 'from'>): void {
    // `from` first: a property added after a spread gives every message a V8 hidden class of its
    // own (a new map and descriptor array in old space per message; store/src/indexed-record.ts).
    this.raw.addMessage({ from: this.id, ...m } as Message);
  }

  private softState(): SoftState {
    return { role: this._role, leader: this._leader, term: this._term };
  }

  private hardState(): HardState {
    return { term: this._term, vote: this.vote, commit: this.commit };
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What an append's entries weigh against the in-flight byte limit. */
function payloadBytes(entries: readonly Entry[]): number {
  let bytes = 0;
  for (const entry of entries) bytes += entry.data.byteLength;
  return bytes;
}

/** Entries after the snapshot; a stored suffix that does not continue the snapshot is stale and dropped. */
function restoredEntries(entries: readonly Entry[], offsetIndex: number, offsetTerm: number): Entry[] {
  const at = entries.findIndex((e) => e.index === offsetIndex);
  if (at >= 0 && offsetIndex > 0 && entries[at].term !== offsetTerm) return [];
  return entries.filter((e) => e.index > offsetIndex);
}
