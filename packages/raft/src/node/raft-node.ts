// The driver: runs a RaftCore against real time, storage, a transport and a state machine.
// Everything the core decides comes out in Ready batches; this file performs them in the order
// the Ready contract demands, one batch at a time, and holds the public API. The work of each step
// lives beside it, along hashicorp/raft's seams:
//   proposal-queue.ts  proposals batched per turn (group commit)
//   log-writer.ts      a Ready made durable, a failed write retried (log-fault.ts, storage-fault.ts)
//   peer-sender.ts     messages to the other servers, snapshots in pieces (snapshot-transfer.ts)
//   fsm-apply.ts       committed entries applied, a leader's snapshot restored
//   snapshots.ts       this server's own snapshots and the compaction they allow
//   ticker.ts          the clock that drives elections and heartbeats
//   membership.ts      configuration changes; catch-up.ts, the election gate of an empty server
//   node-metrics.ts    counters, commit and apply times, followers' last contact
//   pending-proposals.ts, pending-reads.ts: callers waiting for an apply or a read index
// The pure consensus state machine is ../core (etcd-io/raft's shape).
import { EventEmitter } from 'node:events';
import { voterIds } from '../core/configuration';
import { RaftCore } from '../core/raft-core';
import type { Configuration, Message, NodeId, Ready, Role, ServerInfo, SnapshotMeta } from '../core/types';
import { LeadershipLostError, NodeStoppedError, NotLeaderError } from '../interfaces';
import { monotonicMs } from '../monotonic-clock';
import { CatchUpGate, type CaughtUp } from './catch-up';
import { FsmApply, loadRestoring } from './fsm-apply';
import { Inbound } from './inbound';
import { LogFault } from './log-fault';
import { LeaderWatch } from './leader-watch';
import { LogWriter } from './log-writer';
import { Membership } from './membership';
import { NodeMetrics } from './node-metrics';
import { coreConfig, resolveOptions, type RaftNodeOptions, type ResolvedOptions } from './options';
import { PeerSender } from './peer-sender';
import { PendingProposals } from './pending-proposals';
import { PendingReads } from './pending-reads';
import { ProposalQueue } from './proposal-queue';
import { ReadyProgress } from './ready-progress';
import { Snapshots } from './snapshots';
import { describeStorageError, StorageFaultError, type StorageFault } from './storage-fault';
import { Ticker } from './ticker';
import { ownEntryBytes } from '../entry-bytes';

export type { RaftNodeOptions, RaftLogger } from './options';
export { StorageFaultError, describeStorageError, type StorageFault, type StorageRecovery } from './storage-fault';

/**
 * One Raft server. Events: 'leader' (ServerInfo | null) when the known leader changes,
 * 'role' (Role) when this server's role changes, 'applied' (index) after each applied batch, 'caught-up' (CaughtUp) when a server
 * that started without Raft state has caught up with a leader (catch-up.ts),
 * 'storage-fault' (StorageFault) when a storage write starts failing, 'storage-recovered'
 * (StorageRecovery) when it succeeds again (see `storageFault()`), 'error' (err) if the node stops
 * because something other than storage failed while carrying out a Ready.
 *
 * A failed storage write never stops the node: it keeps the Ready it could not write, takes no part
 * in Raft meanwhile (nothing that depends on the write is sent, applied or acknowledged) and
 * retries the same write until it succeeds, then carries on with that Ready.
 */
export class RaftNode extends EventEmitter {
  private readonly opts: ResolvedOptions;
  private readonly core: RaftCore;
  private readonly queue = new ProposalQueue();
  private readonly proposed = new PendingProposals();
  private readonly reads = new PendingReads();
  private readonly metrics: NodeMetrics;
  private readonly peers: PeerSender;
  /** Messages from outside the configuration dropped, snapshots received in pieces (inbound.ts). */
  private readonly inbound: Inbound;
  /** voterRank() as last worked out, and the configuration it was for. */
  private rankIn: { configuration: Configuration; place: { rank: number; of: number } | null } | null = null;
  /** This server's own snapshots: when, taking, persisting, compaction, the latest stored (snapshots.ts). */
  private readonly snapshots: Snapshots;
  private readonly fsm: FsmApply;
  /** A Ready whose write failed: its retries, and the leader heard of meanwhile (log-fault.ts). */
  private readonly logFault = new LogFault();
  private readonly log: LogWriter;
  private readonly ticker: Ticker;
  private readonly membership: Membership;
  /** Set when the node started with no Raft state: it stays out of elections until caught up. */
  private catchUp: CatchUpGate | null = null;
  private scheduled = false;
  private inFlight: Promise<void> | null = null;
  /** The step the Ready in flight is at: one that does not finish is reported (ready-progress.ts). */
  private readonly readyProgress = new ReadyProgress();
  private stopped = false;
  private role: Role;
  private readonly leaders: LeaderWatch;
  private readonly idleWaiters: (() => void)[] = [];
  /** discardLogThrough() calls waiting for the log to be compacted past their index. */
  private discardWaiters: { index: number; resolve: () => void }[] = [];
  /** Stepped down in the Ready being handled: fail the proposals still pending once it has applied. */
  private failProposedAfterApply = false;

  private constructor(opts: ResolvedOptions, core: RaftCore, snapshot: { meta: SnapshotMeta; data?: Uint8Array } | undefined) {
    super();
    this.opts = opts;
    this.core = core;
    this.metrics = new NodeMetrics(opts.observer);
    this.snapshots = new Snapshots(
      {
        opts,
        applied: () => this.fsm.applied,
        voterRank: () => this.voterRank(),
        snapshotMeta: (index) => this.core.snapshotMeta(index),
        stopped: () => this.stopped,
        mayTakeNow: () => !this.inFlight && !this.logFault.current,
        written: () => this.schedule(),
        taken: () => void this.metrics.counters.snapshotsTaken++,
        emit: (event: string, payload: unknown) => void this.emit(event, payload),
        logError: (o, msg) => this.logError(o, msg),
      },
      snapshot,
    );
    this.fsm = new FsmApply(
      {
        opts,
        proposed: this.proposed,
        snapshots: this.snapshots,
        metrics: this.metrics,
        learnAddresses: (configuration) => this.peers.learn(configuration),
        emitApplied: (index) => void this.emit('applied', index),
      },
      snapshot?.meta.index ?? 0,
    );
    this.log = new LogWriter({
      opts,
      fault: this.logFault,
      snapshots: this.snapshots,
      stopped: () => this.stopped,
      where: () => ({ role: this.core.role, term: this.core.term }),
      faulted: (fault) => this.onStorageFault(fault),
      recovered: (recovery) => {
        this.emit('storage-recovered', recovery);
        this.leaders.announce();
        // The clock stood still: ticks resume with the next interval.
      },
      logError: (o, msg) => this.logError(o, msg),
    });
    this.ticker = new Ticker(opts.tickMs, opts.logger, () => this.tick());
    this.membership = new Membership({
      core,
      proposed: this.proposed,
      stopped: () => this.stopped,
      storageFault: () => (this.logFault.current ? new StorageFaultError(this.logFault.current.message) : null),
      isLeader: () => this.isLeader(),
      leader: () => this.leader(),
      learnAddresses: (servers) => this.peers.learn({ servers }),
      onLeader: (listener) => {
        this.on('leader', listener);
        return () => void this.off('leader', listener);
      },
      schedule: () => this.schedule(),
    });
    this.role = core.role;
    this.leaders = new LeaderWatch(core.leader, opts.id, () => this.leader(), (leader) => void this.emit('leader', leader));
    this.peers = new PeerSender({
      id: opts.id,
      transport: opts.transport,
      logger: opts.logger,
      pieceBytes: opts.snapshotChunkBytes,
      openSnapshot: () => this.snapshots.openStored(),
      leading: (term) => !this.stopped && this.isLeader() && this.core.term === term,
      matched: (id) => this.core.matchOf(id),
      stopped: () => this.stopped,
    });
    this.peers.learn(core.configuration);
    if (snapshot) this.peers.learn(snapshot.meta.configuration);
    opts.transport.onMessage((m, fromAddress) => this.onMessage(m, fromAddress));
    this.inbound = new Inbound({
      opts,
      term: () => this.core.term,
      members: () => this.core.configuration.servers,
      leading: () => this.core.role === 'leader',
      leader: () => this.core.leader,
      sinceLeaderContactMs: () => this.leaders.sinceContactMs(),
      accepting: () => !this.stopped && !this.logFault.current,
      deliver: (m) => this.onMessage(m, undefined),
    });
  }

  /** Loads storage, restores the state machine from the latest snapshot and builds the core. */
  static async create(options: RaftNodeOptions): Promise<RaftNode> {
    const opts = resolveOptions(options);
    const persisted = await loadRestoring(opts);
    const core = new RaftCore(coreConfig(opts), { hardState: persisted.hardState, snapshot: persisted.snapshot?.meta, entries: persisted.entries });
    const node = new RaftNode(opts, core, persisted.snapshot);
    const empty = persisted.hardState.term === 0 && persisted.entries.length === 0 && !persisted.snapshot;
    if (empty) node.catchUp = node.catchUpGate();
    return node;
  }

  get id(): NodeId {
    return this.opts.id;
  }

  start(): void {
    if (this.ticker.running || this.stopped) return;
    this.ticker.start();
    this.snapshots.start();
    this.schedule();
  }

  /** Stops ticking, fails everything pending, waits for the batch in flight and closes storage. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.ticker.stop();
    this.logFault.wake();
    // A snapshot being persisted stops at its next slice; transfers stop at their next piece.
    this.snapshots.stop();
    this.peers.stop();
    this.inbound.stop();
    this.queue.rejectAll(new NodeStoppedError());
    this.proposed.failAll(() => new NodeStoppedError());
    this.reads.failAll(() => new NodeStoppedError());
    await this.inFlight?.catch(() => undefined);
    await this.snapshots.settled();
    await this.opts.storage.close();
    this.idleWaiters.splice(0).forEach((w) => w());
    this.discardWaiters = []; // never compacted now: nothing to follow it
  }

  /** Writes the initial configuration if this server has no Raft state at all; says whether it did. */
  async bootstrap(servers: ServerInfo[]): Promise<boolean> {
    if (this.core.lastIndex > 0 || this.core.term > 0 || this.snapshots.latest) return false;
    this.core.bootstrap({ servers });
    this.catchUp?.bootstrapped();
    this.peers.learn({ servers });
    this.schedule();
    await this.idle();
    return true;
  }

  /** Resolves with the state machine's result once the command is committed and applied here. */
  propose(data: Uint8Array): Promise<unknown> {
    const refused = this.refusal(true);
    if (refused) return Promise.reject(refused);
    const done = this.queue.add(data);
    this.schedule();
    return done;
  }

  /** ReadIndex: resolves once this server has applied everything committed when it was called. */
  readBarrier(timeoutMs = 5000): Promise<void> {
    const refused = this.refusal(false);
    if (refused) return Promise.reject(refused);
    const { ctx, done } = this.reads.start(timeoutMs, () => new NotLeaderError(this.leader()));
    this.core.readIndex(ctx);
    this.schedule();
    return done;
  }

  /** False while a storage fault keeps this server out of Raft, even if its core still leads. */
  isLeader(): boolean {
    return this.core.role === 'leader' && !this.logFault.current && this.logFault.superseding(this.core.term) === null;
  }

  /**
   * A leader that has committed an entry of its own term and applied it, and may serve reads from
   * its state machine. Committed is not enough: a leader restarted with entries it had committed
   * (and answered) before, or elected with entries of earlier terms, applies them only after its
   * no-op commits, and a read in between missed acknowledged writes (crash-restart.test, a loaded run).
   */
  leaderReady(): boolean {
    return this.isLeader() && this.core.leaderReady && this.fsm.applied >= this.core.leaderNoopIndex;
  }

  /**
   * The leader as far as this server knows. While a storage fault keeps it out of Raft it is never
   * this server; it is the server that most recently sent leader traffic (so requests can still be
   * forwarded), else the last leader known, else null.
   */
  leader(): ServerInfo | null {
    let id = this.core.leader;
    if (this.logFault.current) id = this.logFault.faultedLeader(id, this.id);
    else id = this.logFault.superseding(this.core.term) ?? id;
    if (id === null) return null;
    return { id, address: this.peers.address(id) ?? '' };
  }

  /**
   * Null while storage works. Otherwise what fails, since when and why (see StorageFault): a
   * 'log' fault — this server takes no part in Raft until the write succeeds — is reported before
   * a 'snapshot' one.
   */
  storageFault(): StorageFault | null {
    const fault = this.logFault.current ?? this.snapshots.fault;
    return fault ? { ...fault } : null;
  }

  term(): number {
    return this.core.term;
  }

  /**
   * The term of the log entry at `index` (a backup's meta names the term its state was written in),
   * or undefined once that entry is compacted away and is not the latest snapshot's own index.
   */
  termAt(index: number): number | undefined {
    const latest = this.snapshots.latest;
    return this.core.termAt(index) ?? (latest?.index === index ? latest.term : undefined);
  }

  /**
   * The first index still in the log: no entry before it is sent to a follower again, nor replayed
   * here at a restart (a staged restore's state file is kept until its entry is past this).
   */
  firstLogIndex(): number {
    return this.core.firstIndex;
  }

  /**
   * The state machine's state no longer depends on the entries through `index` (a restore
   * replaced it): a snapshot is taken once `index` is applied, and the log is compacted through it
   * (snapshots.ts discardThrough). Resolves once it is; never when the node stops first.
   */
  discardLogThrough(index: number): Promise<void> {
    if (index < this.core.firstIndex) return Promise.resolve(); // compacted already
    this.snapshots.discardThrough(index);
    const done = new Promise<void>((resolve) => this.discardWaiters.push({ index, resolve }));
    this.schedule();
    return done;
  }

  lastContactMs(): number {
    // A leader that cannot write has not led since its fault began.
    if (this.core.role === 'leader') return this.logFault.current ? monotonicMs() - this.logFault.current.since : 0;
    return this.leaders.sinceContactMs();
  }

  /**
   * On the leader: how long ago (ms) each other server in the configuration last answered an append
   * or heartbeat of this term (Infinity: not yet). Empty on a follower.
   */
  followerLastContact(): { id: NodeId; address: string; ms: number }[] {
    if (!this.isLeader()) return [];
    return this.metrics.followerLastContact(this.core.configuration.servers, this.id);
  }

  /**
   * True while this server, started without Raft state, has not yet caught up with a leader: it
   * takes no part in elections, and what it serves from its own state may be behind (catch-up.ts).
   */
  catchingUp(): boolean {
    return this.catchUp?.pending ?? false;
  }

  hasEverHadLeader(): boolean {
    return this.leaders.everHadLeader;
  }

  configuration(): ServerInfo[] {
    return this.core.configuration.servers.map((s) => ({ ...s }));
  }

  /**
   * Every server that was in a configuration this node held since it started, at its last known
   * address — those removed since included (the leader asks a removed server back: readmission).
   */
  everMembers(): { id: string; address: string }[] {
    return this.peers.everMembers();
  }

  /** Adds a voter, or a learner (non-voter) when `server.learner` is set; one change at a time (membership.ts). */
  addServer(server: ServerInfo): Promise<void> {
    return this.membership.add(server);
  }

  /** Makes learner `id` a voter once it has caught up (membership.ts). */
  promote(id: NodeId): Promise<void> {
    return this.membership.promote(id);
  }

  removeServer(id: NodeId): Promise<void> {
    return this.membership.remove(id);
  }

  /** Hands leadership to `to` (or the most caught-up follower); resolves when another server leads (membership.ts). */
  transferLeadership(to?: NodeId, timeoutMs = 5000): Promise<void> {
    return this.membership.transfer(to, timeoutMs);
  }

  appliedIndex(): number {
    return this.fsm.applied;
  }

  lastIndex(): number {
    return this.core.lastIndex;
  }

  commitIndex(): number {
    return this.core.commitIndex;
  }

  stats(): object {
    return {
      id: this.id,
      role: this.core.role,
      term: this.core.term,
      leader: this.core.leader,
      commitIndex: this.core.commitIndex,
      appliedIndex: this.fsm.applied,
      lastIndex: this.core.lastIndex,
      lastSnapshotIndex: this.snapshots.latest?.index ?? 0,
      lastContactMs: this.lastContactMs(),
      pendingProposals: this.proposed.size + this.queue.length,
      configuration: this.configuration(),
      storageFault: this.storageFault(),
      catchingUp: this.catchingUp(),
      ...this.metrics.counters,
    };
  }

  // ---- the loop ----

  private onMessage(message: Message, fromAddress: string | undefined): void {
    if (this.stopped) return;
    if (this.inbound.refused(message)) return;
    this.peers.heardFrom(message.from, fromAddress);
    if (this.logFault.current) {
      // Out of Raft until the failed write succeeds: the message is lost, as on a bad network.
      // Only note who leads now, so that leader() can point requests at it.
      const fromLeader = message.type === 'append' || message.type === 'heartbeat' || message.type === 'snapshot';
      if (fromLeader && message.from !== this.id && this.logFault.heardLeader(message.from, message.term, this.core.term)) this.leaders.announce();
      return;
    }
    // Entries the log and the state machine may keep: their bytes out of the frame (entry-bytes.ts).
    if (message.type === 'append' && message.entries.length > 0 && message.from !== this.id) ownEntryBytes(message.entries);
    this.core.step(message);
    if (message.from === this.core.leader && message.term === this.core.term) {
      this.leaders.heard();
    }
    if ((message.type === 'appendResp' || message.type === 'heartbeatResp') && this.core.role === 'leader' && message.term === this.core.term) {
      this.metrics.followerAnswered(message.from);
    }
    this.schedule();
  }

  private tick(): void {
    if (this.logFault.current) return; // no elections, no heartbeats: the clock stands still until we are back
    this.core.tick();
    this.readyProgress.check(this.opts.logger, this.opts.id);
    // A quiet server with enough applied entries still snapshots when its interval comes round.
    if (this.opts.snapshotIntervalMs > 0 && !this.inFlight && this.snapshots.due()) this.snapshots.take();
    if (this.catchUp?.pending) this.catchUp.poll();
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drive();
    });
  }

  /** One turn: hand queued proposals to the core as one batch, then process one Ready. */
  private drive(): void {
    if (this.stopped) return;
    this.queue.handOver({
      refusal: () => (this.logFault.current ? new StorageFaultError(this.logFault.current.message) : null),
      propose: (data) => (this.core.role === 'leader' ? this.core.propose(data) : null),
      // Still leader but refusing: a leadership transfer is under way and the next leader is not known yet.
      notLeader: () => new NotLeaderError(this.core.role === 'leader' ? null : this.leader()),
      proposed: this.proposed,
      metrics: this.metrics,
    });
    if (this.inFlight) return; // the batch in flight schedules the next turn when it is done
    const compaction = this.snapshots.takeCompaction();
    // Between Readies, as the core requires: the snapshot it names is now on disk.
    if (compaction) {
      this.core.compact(compaction.meta, compaction.compactTo);
      const compacted = this.discardWaiters.filter((w) => w.index < this.core.firstIndex);
      this.discardWaiters = this.discardWaiters.filter((w) => w.index >= this.core.firstIndex);
      for (const w of compacted) w.resolve();
    }
    if (!this.core.hasReady()) {
      this.idleWaiters.splice(0).forEach((w) => w());
      return;
    }
    const ready = this.core.ready();
    this.inFlight = this.handleReady(ready).then(
      () => {
        this.readyProgress.done();
        this.inFlight = null;
        this.schedule();
      },
      (err: unknown) => {
        this.readyProgress.done();
        this.inFlight = null;
        if (this.stopped) return;
        // Not a storage failure (those are retried in log-writer.ts): a bug in the state machine or
        // here, after the Ready was partly carried out. Nothing safe is left to do but stop.
        this.logError({ err: describeStorageError(err) }, 'raft: processing a ready batch failed; stopping the node');
        // 'error' without a listener would throw here; the node stops either way.
        if (this.listenerCount('error') > 0) this.emit('error', err);
        void this.stop().catch(() => undefined);
      },
    );
  }

  private async handleReady(ready: Ready): Promise<void> {
    this.metrics.counters.readies++;
    if (ready.softState) this.onSoftState(ready.softState.role, ready.softState.leader);

    this.peers.learn(this.core.configuration);
    // A leader that writes nothing but learnt of a commit (its followers' answers) answers the
    // proposers before telling the followers: otherwise the socket writes of the commit-index
    // appends come first and every answer waits for them (issue #14: at one client that is most
    // Readies). The messages keep their order: any later send flushes them first (peer-sender.ts).
    const answerFirst = this.role === 'leader' && ready.entries.length === 0 && !ready.snapshot && ready.committed.length > 0;
    // A leader's appends and heartbeats promise nothing about its own disk, so they go out
    // while it writes (Raft thesis §10.2.1): commit latency becomes max(local fsync, RTT +
    // follower fsync) instead of their sum. The core counts the leader's own entries toward
    // the quorum only after advance(). Answers and votes do promise durable state: they wait.
    const late: Message[] = [];
    for (const m of ready.messages) {
      if (!answerFirst && (m.type === 'append' || m.type === 'heartbeat' || m.type === 'snapshot')) this.peers.send(m);
      else late.push(m);
    }

    // 1. Persist: the snapshot (and restore from it), then hard state and entries, synced. A
    //    failed write is retried until it succeeds; nothing below happens before it has.
    // A snapshot from the leader came in pieces (inbound.ts), or whole from an older leader.
    const install = ready.snapshot && this.inbound.install(ready.snapshot);
    this.readyProgress.at('persist');
    if (!(await this.log.persist(ready, install))) return; // stopped meanwhile
    if (install) {
      this.readyProgress.at('restore');
      await this.fsm.restore(install);
    }
    if (this.stopped) return;
    this.metrics.counters.appendedEntries += ready.entries.length;

    // 2. Send the rest.
    if (answerFirst) this.peers.defer(late);
    else if (late.length > 0) {
      for (const m of late) this.peers.send(m);
      // A follower's answer goes now, not after this Ready's apply: the leader's commit waits for it.
      this.peers.flush();
    }

    // 3. Apply.
    const committed = ready.committed;
    if (committed.length > 0) {
      this.readyProgress.at('apply');
      await this.metrics.applying(committed[committed.length - 1].index, committed.length, () => this.fsm.apply(committed, () => this.stopped));
      if (this.stopped) return;
    }
    if (this.failProposedAfterApply) {
      this.failProposedAfterApply = false;
      this.proposed.failAll(() => new LeadershipLostError());
    }

    // 4. Release reads.
    const applied = this.fsm.applied;
    for (const rs of ready.readStates) this.reads.confirmed(rs.ctx, rs.index, applied);
    for (const ctx of ready.failedReads) this.reads.failed(ctx, new NotLeaderError(this.leader()));
    this.reads.appliedTo(applied);

    // 5. Advance, then compact if enough has been applied since the last snapshot.
    this.core.advance(ready);
    this.inbound.settled(this.fsm.applied);
    if (this.snapshots.due()) this.snapshots.take();
  }

  /**
   * This server's place among the latest configuration's voters, in id order (the snapshot bound's
   * phase). Asked after every Ready once a threshold of entries is applied, so it is worked out
   * once per configuration (the core hands out the same object until a Config entry changes it).
   */
  private voterRank(): { rank: number; of: number } | null {
    const configuration = this.core.configuration;
    if (this.rankIn?.configuration !== configuration) {
      const voters = voterIds(configuration).sort();
      const rank = voters.indexOf(this.id);
      this.rankIn = { configuration, place: rank < 0 ? null : { rank, of: voters.length } };
    }
    return this.rankIn.place;
  }

  private onSoftState(role: Role, leader: NodeId | null): void {
    const wasLeader = this.role === 'leader';
    // Read before roleChanged() forgets this term's answers.
    const lastHeard = wasLeader && role !== 'leader' ? this.metrics.followerLastContact(this.core.configuration.servers, this.id) : [];
    if (role !== this.role) {
      this.metrics.roleChanged();
      this.role = role;
      this.opts.logger.info({ id: this.id, role, term: this.core.term }, 'raft: role changed');
      this.emit('role', role);
    }
    if (wasLeader && role !== 'leader') {
      // Why, as far as this server can tell: how long ago each follower last answered (a leader that
      // hears no majority within an election timeout steps down: check-quorum).
      const heard = lastHeard.map((f) => `${f.address} ${Number.isFinite(f.ms) ? `${Math.round(f.ms)} ms ago` : 'never'}`);
      this.opts.logger.info({ id: this.id, term: this.core.term, followersLastHeard: heard.join(', ') }, 'raft: no longer leader');
      // Queued proposals never reached the log: they are refused as not-leader at once.
      this.queue.rejectAll(new NotLeaderError(null));
      // Proposals in the log are failed only after this Ready's committed entries are applied
      // (handleReady, step 3): a leader steps down in the same Ready that commits its own removal,
      // and the entries committed with it — that removal, ordinary writes — happened and must be
      // answered so, not "leadership lost" (issue #35). What is still pending after that has an
      // unknown outcome (etcd and hashicorp/raft behaviour).
      this.failProposedAfterApply = true;
    }
    this.leaders.coreChanged(leader);
  }

  /** A Ready write started failing (log-writer.ts): nothing queued reaches the log; what is in it may still commit elsewhere. */
  private onStorageFault(fault: StorageFault): void {
    this.queue.rejectAll(new StorageFaultError(fault.message));
    this.proposed.failAll(() => new StorageFaultError(fault.message, true));
    this.reads.failAll(() => new StorageFaultError(fault.message));
    this.emit('storage-fault', { ...fault });
    this.leaders.announce();
  }

  /** Why nothing may be asked of this node now (stopped, a storage fault; not leading, when `leading`), or null. */
  private refusal(leading: boolean): Error | null {
    if (this.stopped) return new NodeStoppedError();
    if (this.logFault.current) return new StorageFaultError(this.logFault.current.message);
    if (leading && !this.isLeader()) return new NotLeaderError(this.leader());
    return null;
  }

  private catchUpGate(): CatchUpGate {
    return new CatchUpGate(
      {
        followedLeader: () => (this.core.role === 'follower' && this.core.leader !== this.id ? this.core.leader : null),
        readBarrier: (ms) => this.readBarrier(ms),
        appliedIndex: () => this.fsm.applied,
        setElectionsAllowed: (allowed) => this.core.setElectionsAllowed(allowed),
        caughtUp: (info: CaughtUp) => this.emit('caught-up', info),
      },
      this.opts.logger,
    );
  }

  private logError(o: object, msg: string): void {
    if (this.opts.logger.error) this.opts.logger.error(o, msg);
    else this.opts.logger.warn(o, msg);
  }

  /** Resolves when no Ready is pending or in flight. */
  private idle(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.schedule();
    });
  }
}
