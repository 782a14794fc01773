// The driver: runs a RaftCore against real time, storage, a transport and a state machine.
// Everything the core decides comes out in Ready batches; this file performs them in the
// order the Ready contract demands, one batch at a time.
//
// Why ~970 lines: the Ready loop (persist, send, apply, with group commit and answer-first sends),
// the membership calls and their waits, and the public API. Around it: snapshots.ts (when and how
// this server's snapshots are taken and stored), snapshot-transfer.ts (sending and receiving them),
// log-fault.ts (a failed write's retries), pending-proposals.ts and pending-reads.ts, catch-up.ts.
// Splitting the Ready loop from the API (issue #26 item 6) is still to do.
import { EventEmitter } from 'node:events';
import { RaftCore } from '../core/raft-core';
import type { ConfChange } from '../core/configuration';
import {
  EntryType,
  type Configuration,
  type Entry,
  type Message,
  type NodeId,
  type Ready,
  type Role,
  type ServerInfo,
  type SnapshotMeta,
} from '../core/types';
import { LeadershipLostError, NotCaughtUpError, NotLeaderError, type PersistedStateMeta, type SnapshotData, type SnapshotSource, type StorageSnapshotSink } from '../interfaces';
import { joinSnapshot, snapshotSize } from '../storage/snapshot-chunks';
import { INSTALL_SNAPSHOT, SnapshotReceiver, SnapshotSender } from './snapshot-transfer';
import { resolveOptions, type RaftNodeOptions, type ResolvedOptions } from './options';
import { PendingProposals } from './pending-proposals';
import { PendingReads } from './pending-reads';
import { CatchUpGate, type CaughtUp } from './catch-up';
import { isUnspecifiedHost, splitHostPort } from '../transport/sender-address';
import { describeStorageError, StorageFaultError, type StorageFault } from './storage-fault';
import { LogFault } from './log-fault';
import { monotonicMs } from '../monotonic-clock';
import { strangerDrop } from './stranger-filter';
import { Snapshots } from './snapshots';

export type { RaftNodeOptions, RaftLogger } from './options';
export { StorageFaultError, describeStorageError, type StorageFault, type StorageRecovery } from './storage-fault';

interface QueuedProposal {
  data: Uint8Array;
  resolve(result: unknown): void;
  reject(err: Error): void;
}

export class NodeStoppedError extends Error {
  constructor() {
    super('raft node stopped');
    this.name = 'NodeStoppedError';
  }
}

/** A snapshot from the leader to install: its bytes, or the storage sink they were written into. */
interface Install {
  meta: SnapshotMeta;
  data?: SnapshotData;
  sink?: StorageSnapshotSink;
}

/** Retry schedule of a failed Ready write (a failed snapshot write's: snapshots.ts). */
/** How far (entries) behind the leader's log a learner may be and still be promoted. */
const PROMOTE_MAX_LAG = 1_000;
/** How long a configuration change waits for the one before it to commit (changeConfiguration). */
const CONF_CHANGE_WAIT_MS = 10_000;

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
/** How long after start() a late tick is the agent's own start, not a stall worth a warning. */
const STARTUP_LAG_GRACE_MS = 5_000;
/** Committed entries are applied in slices of about this many ms of event-loop time (apply()). */
const APPLY_SLICE_MS = 8;
/** The clock is read after every this many entries applied. */
const APPLY_CHECK_EVERY = 64;

export class RaftNode extends EventEmitter {
  private readonly opts: ResolvedOptions;
  private readonly core: RaftCore;
  /** Every server ever seen in a configuration: messages to a just-removed server still go out. */
  private readonly addresses = new Map<NodeId, string>();
  private readonly proposed = new PendingProposals();
  private readonly reads = new PendingReads();
  private queue: QueuedProposal[] = [];
  /** Messages held back until the proposers' answers are written (handleReady, answerFirst). */
  private deferredSends: Message[] = [];
  /** Snapshots sent to followers and received from the leader, in pieces (snapshot-transfer.ts). */
  private readonly snapshotSender: SnapshotSender;
  private readonly snapshotReceiver: SnapshotReceiver;
  /** This server's own snapshots: when, taking, persisting, compaction, the latest stored (snapshots.ts). */
  private readonly snapshots: Snapshots;
  private applied: number;
  private scheduled = false;
  private inFlight: Promise<void> | null = null;
  private ticker: NodeJS.Timeout | null = null;
  private nextTickAt = 0;
  private lastLagWarning = -Infinity;
  /**
   * No lag warning before this: the agent's own start (HTTP and DNS listeners, the UI's files, the
   * first listings) runs synchronously after Raft starts ticking and made a warning at every start,
   * before any peer could have been waiting on this server.
   */
  private lagQuietUntil = Infinity;
  private stopped = false;
  private lastLeaderContact = 0;
  private everHadLeader = false;
  private role: Role;
  private leaderId: NodeId | null;
  private readonly idleWaiters: (() => void)[] = [];
  /** A Ready whose write failed: its retries, and the leader heard of meanwhile (log-fault.ts). */
  private readonly logFault = new LogFault();
  /** The leader id last announced by a 'leader' event. */
  private announcedLeader: NodeId | null;
  private readonly counters = { readies: 0, appendedEntries: 0, appliedEntries: 0, snapshotsTaken: 0, snapshotsInstalled: 0 };
  /** Leader, with an observer: proposal batches not yet committed (last index, when handed to the core, size). */
  private readonly uncommittedBatches: { last: number; at: number; entries: number }[] = [];
  /** Leader: when each follower last answered an append or heartbeat of this term (monotonicMs()). */
  private readonly followerAnswers = new Map<NodeId, number>();

  private constructor(
    opts: ResolvedOptions,
    core: RaftCore,
    snapshot: { meta: SnapshotMeta; data?: Uint8Array } | undefined,
  ) {
    super();
    this.opts = opts;
    this.core = core;
    this.snapshots = new Snapshots(
      {
        opts,
        applied: () => this.applied,
        snapshotMeta: (index) => this.core.snapshotMeta(index),
        stopped: () => this.stopped,
        mayTakeNow: () => !this.inFlight && !this.logFault.current,
        written: () => this.schedule(),
        taken: () => void this.counters.snapshotsTaken++,
        emit: (event: string, payload: unknown) => void this.emit(event, payload),
        logError: (o, msg) => this.logError(o, msg),
      },
      snapshot,
    );
    this.applied = snapshot?.meta.index ?? 0;
    this.role = core.role;
    this.leaderId = core.leader;
    this.announcedLeader = core.leader;
    this.learnAddresses(core.configuration);
    if (snapshot) this.learnAddresses(snapshot.meta.configuration);
    opts.transport.onMessage((m, fromAddress) => this.onMessage(m, fromAddress));
    this.snapshotSender = new SnapshotSender({
      id: opts.id,
      transport: opts.transport,
      logger: opts.logger,
      pieceBytes: opts.snapshotChunkBytes,
      open: () => this.snapshots.openStored(),
      leading: (term) => !this.stopped && this.isLeader() && this.core.term === term,
    });
    this.snapshotReceiver = new SnapshotReceiver({
      term: () => this.core.term,
      accepting: () => !this.stopped && !this.logFault.current,
      deliver: (m) => this.onMessage(m, undefined),
      refuses: (from, term) => {
        const why = this.strangerDrop({ type: 'snapshot', from, to: this.id, term, meta: { index: 0, term: 0, configuration: { servers: [] } } });
        if (why) this.opts.observer.strangerDropped?.(from, 'snapshot', why);
        return why;
      },
      // Pieces go straight into a snapshot file when the storage streams and reads back (issue #34).
      ...(opts.storage.createSnapshot && opts.storage.readSnapshot ? { createSink: (meta: SnapshotMeta) => opts.storage.createSnapshot!(meta, Infinity) } : {}),
    });
    opts.transport.handle(INSTALL_SNAPSHOT, (body) => this.snapshotReceiver.receive(body));
  }

  /** Loads storage, restores the state machine from the latest snapshot and builds the core. */
  static async create(options: RaftNodeOptions): Promise<RaftNode> {
    const opts = resolveOptions(options);
    // A state machine and a storage that can: the stored snapshot is restored a piece at a time,
    // never read whole (issue #34: a restart at 256 MiB of state held the bytes twice over).
    const storage = opts.storage;
    const streamed = opts.fsm.restoreFrom && storage.readSnapshot && storage.loadWithoutSnapshotData ? storage : null;
    const persisted: PersistedStateMeta & { snapshot?: { meta: SnapshotMeta; data?: Uint8Array } } = streamed ? await streamed.loadWithoutSnapshotData!() : await storage.load();
    if (persisted.snapshot) {
      if (streamed) {
        const reader = await streamed.readSnapshot!();
        if (!reader || reader.meta.index !== persisted.snapshot.meta.index) throw new Error('raft: the stored snapshot changed while it was being loaded');
        try {
          await restoreWithProgress(opts, reader, reader.meta, reader.size, 'stored');
        } finally {
          reader.close();
        }
      } else {
        opts.fsm.restore(persisted.snapshot.data!, persisted.snapshot.meta);
      }
    }
    const core = new RaftCore(
      {
        id: opts.id,
        electionTicks: opts.electionTicks,
        heartbeatTicks: opts.heartbeatTicks,
        preVote: opts.preVote,
        checkQuorum: opts.checkQuorum,
        maxInflight: opts.maxInflight,
        maxEntriesPerAppend: opts.maxEntriesPerAppend,
        random: opts.random,
      },
      { hardState: persisted.hardState, snapshot: persisted.snapshot?.meta, entries: persisted.entries },
    );
    const node = new RaftNode(opts, core, persisted.snapshot);
    const empty = persisted.hardState.term === 0 && persisted.entries.length === 0 && !persisted.snapshot;
    if (empty) node.catchUp = node.catchUpGate();
    return node;
  }

  get id(): NodeId {
    return this.opts.id;
  }

  start(): void {
    if (this.ticker || this.stopped) return;
    this.nextTickAt = monotonicMs() + this.opts.tickMs;
    this.lagQuietUntil = monotonicMs() + STARTUP_LAG_GRACE_MS;
    this.ticker = setInterval(() => this.tick(), this.opts.tickMs);
    this.snapshots.start();
    this.schedule();
  }

  /** Stops ticking, fails everything pending, waits for the batch in flight and closes storage. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    this.logFault.wake();
    // A snapshot being persisted stops at its next slice; transfers stop at their next piece.
    this.snapshots.stop();
    this.snapshotSender.cancelAll();
    this.snapshotReceiver.clear();
    const queued = this.queue;
    this.queue = [];
    for (const p of queued) p.reject(new NodeStoppedError());
    this.proposed.failAll(() => new NodeStoppedError());
    this.reads.failAll(() => new NodeStoppedError());
    await this.inFlight?.catch(() => undefined);
    await this.snapshots.settled();
    await this.opts.storage.close();
    this.idleWaiters.splice(0).forEach((w) => w());
  }

  /** Writes the initial configuration if this server has no Raft state at all; says whether it did. */
  async bootstrap(servers: ServerInfo[]): Promise<boolean> {
    if (this.core.lastIndex > 0 || this.core.term > 0 || this.snapshots.latest) return false;
    this.core.bootstrap({ servers });
    this.catchUp?.bootstrapped();
    this.learnAddresses({ servers });
    this.schedule();
    await this.idle();
    return true;
  }

  /** Resolves with the state machine's result once the command is committed and applied here. */
  propose(data: Uint8Array): Promise<unknown> {
    if (this.stopped) return Promise.reject(new NodeStoppedError());
    if (this.logFault.current) return Promise.reject(new StorageFaultError(this.logFault.current.message));
    if (!this.isLeader()) return Promise.reject(new NotLeaderError(this.leader()));
    return new Promise((resolve, reject) => {
      this.queue.push({ data, resolve, reject });
      this.schedule();
    });
  }

  /** ReadIndex: resolves once this server has applied everything committed when it was called. */
  readBarrier(timeoutMs = 5000): Promise<void> {
    if (this.stopped) return Promise.reject(new NodeStoppedError());
    if (this.logFault.current) return Promise.reject(new StorageFaultError(this.logFault.current.message));
    const { ctx, done } = this.reads.start(timeoutMs, () => new NotLeaderError(this.leader()));
    this.core.readIndex(ctx);
    this.schedule();
    return done;
  }

  /** False while a storage fault keeps this server out of Raft, even if its core still leads. */
  isLeader(): boolean {
    return this.core.role === 'leader' && !this.logFault.current && this.logFault.superseding(this.core.term) === null;
  }

  /** A leader that has committed an entry of its own term and may serve reads. */
  leaderReady(): boolean {
    return this.isLeader() && this.core.leaderReady;
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
    return { id, address: this.addresses.get(id) ?? '' };
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

  lastContactMs(): number {
    // A leader that cannot write has not led since its fault began.
    if (this.core.role === 'leader') return this.logFault.current ? monotonicMs() - this.logFault.current.since : 0;
    if (this.lastLeaderContact === 0) return Infinity;
    return monotonicMs() - this.lastLeaderContact;
  }

  /**
   * True while this server, started without Raft state, has not yet caught up with a leader: it
   * takes no part in elections, and what it serves from its own state may be behind (catch-up.ts).
   */
  catchingUp(): boolean {
    return this.catchUp?.pending ?? false;
  }

  /** Set when the node started with no Raft state: it stays out of elections until caught up. */
  private catchUp: CatchUpGate | null = null;

  private catchUpGate(): CatchUpGate {
    return new CatchUpGate(
      {
        followedLeader: () => (this.core.role === 'follower' && this.core.leader !== this.id ? this.core.leader : null),
        readBarrier: (ms) => this.readBarrier(ms),
        appliedIndex: () => this.applied,
        setElectionsAllowed: (allowed) => this.core.setElectionsAllowed(allowed),
        caughtUp: (info: CaughtUp) => this.emit('caught-up', info),
      },
      this.opts.logger,
    );
  }

  hasEverHadLeader(): boolean {
    return this.everHadLeader;
  }

  configuration(): ServerInfo[] {
    return this.core.configuration.servers.map((s) => ({ ...s }));
  }

  /** Adds a voter, or a learner (non-voter) when `server.learner` is set; one change at a time. */
  async addServer(server: ServerInfo): Promise<void> {
    this.learnAddresses({ servers: [server] });
    await this.changeConfiguration({ type: server.learner ? 'addLearner' : 'add', server });
  }

  /**
   * Makes learner `id` a voter. Refused unless it is a learner that has caught up to within
   * PROMOTE_MAX_LAG entries of the leader's log: a voter that is far behind cannot help commit
   * until it has caught up, and with it the quorum grows (Consul's autopilot promotes only
   * healthy, caught-up non-voters for the same reason).
   */
  async promote(id: NodeId): Promise<void> {
    const server = this.core.configuration.servers.find((s) => s.id === id);
    if (!server) throw new Error(`no server ${id} in the configuration`);
    if (!server.learner) throw new Error(`server ${id} is already a voter`);
    if (!this.isLeader()) throw new NotLeaderError(this.leader());
    const match = this.core.status().progress?.[id]?.match ?? 0;
    if (match + PROMOTE_MAX_LAG < this.core.lastIndex) {
      throw new NotCaughtUpError(`server ${id} has not caught up yet (at ${match} of ${this.core.lastIndex})`);
    }
    await this.changeConfiguration({ type: 'add', server: { id: server.id, address: server.address } });
  }

  async removeServer(id: NodeId): Promise<void> {
    const server = this.core.configuration.servers.find((s) => s.id === id);
    if (!server) return;
    await this.changeConfiguration({ type: 'remove', server });
  }

  /** Hands leadership to `to` (or the most caught-up follower); resolves when another server leads. */
  transferLeadership(to?: NodeId, timeoutMs = 5000): Promise<void> {
    if (this.logFault.current) return Promise.reject(new StorageFaultError(this.logFault.current.message));
    if (!this.isLeader()) return Promise.reject(new NotLeaderError(this.leader()));
    if (this.core.configuration.servers.every((s) => s.id === this.id || s.learner)) {
      return Promise.reject(new Error('no other voter to transfer leadership to'));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('leader', onLeader);
        reject(new Error(`leadership transfer did not complete within ${timeoutMs} ms`));
      }, timeoutMs);
      const onLeader = (leader: ServerInfo | null) => {
        if (leader && leader.id !== this.id) {
          clearTimeout(timer);
          this.off('leader', onLeader);
          resolve();
        }
      };
      this.on('leader', onLeader);
      this.core.transferLeadership(to);
      this.schedule();
    });
  }

  appliedIndex(): number {
    return this.applied;
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
      appliedIndex: this.applied,
      lastIndex: this.core.lastIndex,
      lastSnapshotIndex: this.snapshots.latest?.index ?? 0,
      lastContactMs: this.lastContactMs(),
      pendingProposals: this.proposed.size + this.queue.length,
      configuration: this.configuration(),
      storageFault: this.storageFault(),
      catchingUp: this.catchingUp(),
      ...this.counters,
    };
  }

  // ---- the loop ----

  private async changeConfiguration(change: ConfChange): Promise<void> {
    if (this.stopped) throw new NodeStoppedError();
    if (this.logFault.current) throw new StorageFaultError(this.logFault.current.message);
    if (!this.isLeader()) throw new NotLeaderError(this.leader());
    // One change at a time: a change asked for while the previous one (or the new leader's first
    // entry, or a handover) is uncommitted waits for it, as hashicorp/raft's configuration channel
    // does, rather than failing (a removal asked for right after an election answered 500; CI).
    const waitUntil = monotonicMs() + CONF_CHANGE_WAIT_MS;
    let at = this.core.proposeConfChange(change);
    while (!at && this.core.confChangeWaiting && monotonicMs() < waitUntil) {
      await new Promise((r) => setTimeout(r, 20));
      if (this.stopped) throw new NodeStoppedError();
      at = this.core.proposeConfChange(change);
    }
    if (!at) {
      if (this.core.role !== 'leader') throw new NotLeaderError(this.leader());
      throw new Error('a configuration change is already in progress (or leadership is being transferred)');
    }
    const done = new Promise<unknown>((resolve, reject) => this.proposed.add(at.index, at.term, resolve, reject));
    this.schedule();
    await done;
  }

  /** Why a message from outside the configuration is dropped (stranger-filter.ts), or null. */
  private strangerDrop(message: Message): string | null {
    return strangerDrop(message, {
      members: this.core.configuration.servers,
      self: this.id,
      leading: this.core.role === 'leader',
      sinceLeaderContactMs: this.lastLeaderContact === 0 ? Infinity : monotonicMs() - this.lastLeaderContact,
      electionTimeoutMs: this.opts.tickMs * this.opts.electionTicks,
    });
  }

  private onMessage(message: Message, fromAddress: string | undefined): void {
    if (this.stopped) return;
    const dropped = this.strangerDrop(message);
    if (dropped) {
      this.opts.observer.strangerDropped?.(message.from, message.type, dropped);
      return;
    }
    // A server added to a cluster hears from the leader before it knows the configuration. A
    // wildcard address is never recorded: dialling it reaches this server itself (issue #25).
    if (fromAddress && !this.addresses.has(message.from) && !isUnspecifiedHost(splitHostPort(fromAddress)?.host ?? fromAddress)) {
      this.addresses.set(message.from, fromAddress);
    }
    if (this.logFault.current) {
      // Out of Raft until the failed write succeeds: the message is lost, as on a bad network.
      // Only note who leads now, so that leader() can point requests at it.
      const fromLeader = message.type === 'append' || message.type === 'heartbeat' || message.type === 'snapshot';
      if (fromLeader && message.from !== this.id && this.logFault.heardLeader(message.from, message.term, this.core.term)) this.announceLeader();
      return;
    }
    this.core.step(message);
    if (message.from === this.core.leader && message.term === this.core.term) {
      this.lastLeaderContact = monotonicMs();
    }
    if ((message.type === 'appendResp' || message.type === 'heartbeatResp') && this.core.role === 'leader' && message.term === this.core.term) {
      this.followerAnswers.set(message.from, monotonicMs());
    }
    this.schedule();
  }

  private tick(): void {
    const now = monotonicMs();
    const late = now - this.nextTickAt;
    // A blocked event loop looks like a dead leader to the others; say so when it happens.
    if (late > Math.max(100, this.opts.tickMs * 2) && now - this.lastLagWarning > 1000 && now >= this.lagQuietUntil) {
      this.lastLagWarning = now;
      this.opts.logger.warn({ lagMs: Math.round(late), tickMs: this.opts.tickMs }, 'raft: event loop lag');
    }
    this.nextTickAt = now + this.opts.tickMs;
    if (this.logFault.current) return; // no elections, no heartbeats: the clock stands still until we are back
    this.core.tick();
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
    this.flushProposals();
    if (this.inFlight) return; // the batch in flight schedules the next turn when it is done
    const compaction = this.snapshots.takeCompaction();
    // Between Readies, as the core requires: the snapshot it names is now on disk.
    if (compaction) this.core.compact(compaction.meta, compaction.compactTo);
    if (!this.core.hasReady()) {
      this.idleWaiters.splice(0).forEach((w) => w());
      return;
    }
    const ready = this.core.ready();
    this.inFlight = this.handleReady(ready).then(
      () => {
        this.inFlight = null;
        this.schedule();
      },
      (err: unknown) => {
        this.inFlight = null;
        if (this.stopped) return;
        // Not a storage failure (those are retried in persist()): a bug in the state machine or
        // here, after the Ready was partly carried out. Nothing safe is left to do but stop.
        this.logError({ err: describeStorageError(err) }, 'raft: processing a ready batch failed; stopping the node');
        // 'error' without a listener would throw here; the node stops either way.
        if (this.listenerCount('error') > 0) this.emit('error', err);
        void this.stop().catch(() => undefined);
      },
    );
  }

  private flushProposals(): void {
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    if (this.logFault.current) {
      const err = new StorageFaultError(this.logFault.current.message);
      for (const p of batch) p.reject(err);
      return;
    }
    const positions = this.core.role === 'leader' ? this.core.propose(ownBytes(batch)) : null;
    if (!positions) {
      // Still leader but refusing: a leadership transfer is under way and the next leader is not known yet.
      const err = new NotLeaderError(this.core.role === 'leader' ? null : this.leader());
      for (const p of batch) p.reject(err);
      return;
    }
    positions.forEach((pos, i) => this.proposed.add(pos.index, pos.term, batch[i].resolve, batch[i].reject));
    // One record per batch (not per proposal) keeps measuring commit time off the per-write path.
    if (this.opts.observer.committed && positions.length > 0 && this.uncommittedBatches.length < 4096) {
      this.uncommittedBatches.push({ last: positions[positions.length - 1].index, at: monotonicMs(), entries: positions.length });
    }
  }

  /** Stepped down in the Ready being handled: fail the proposals still pending once it has applied. */
  private failProposedAfterApply = false;

  private async handleReady(ready: Ready): Promise<void> {
    this.counters.readies++;
    if (ready.softState) this.onSoftState(ready.softState.role, ready.softState.leader);

    this.learnAddresses(this.core.configuration);
    // A leader that writes nothing but learnt of a commit (its followers' answers) answers the
    // proposers before telling the followers: otherwise the socket writes of the commit-index
    // appends come first and every answer waits for them (issue #14: at one client that is most
    // Readies). The messages keep their order: any later send flushes them first (sendMessage).
    const answerFirst = this.role === 'leader' && ready.entries.length === 0 && !ready.snapshot && ready.committed.length > 0;
    // A leader's appends and heartbeats promise nothing about its own disk, so they go out
    // while it writes (Raft thesis §10.2.1): commit latency becomes max(local fsync, RTT +
    // follower fsync) instead of their sum. The core counts the leader's own entries toward
    // the quorum only after advance(). Answers and votes do promise durable state: they wait.
    const late: Message[] = [];
    for (const m of ready.messages) {
      if (!answerFirst && (m.type === 'append' || m.type === 'heartbeat' || m.type === 'snapshot')) this.sendMessage(m);
      else late.push(m);
    }

    // 1. Persist: the snapshot (and restore from it), then hard state and entries, synced. A
    //    failed write is retried until it succeeds; nothing below happens before it has.
    // A snapshot from the leader came in pieces (snapshot-transfer.ts), or whole from an older leader.
    const received = ready.snapshot && this.snapshotReceiver.take(ready.snapshot.meta);
    const install: Install | undefined =
      ready.snapshot && (received ? ('sink' in received ? { meta: ready.snapshot.meta, sink: received.sink } : { meta: ready.snapshot.meta, data: received.pieces }) : { meta: ready.snapshot.meta, data: ready.snapshot.data ?? new Uint8Array(0) });
    if (!(await this.persist(ready, install))) return; // stopped meanwhile
    if (install) await this.restoreSnapshot(install);
    if (this.stopped) return;
    this.counters.appendedEntries += ready.entries.length;

    // 2. Send the rest.
    if (answerFirst) this.deferSends(late);
    else for (const m of late) this.sendMessage(m);

    // 3. Apply.
    if (ready.committed.length > 0) {
      const observer = this.opts.observer;
      const started = monotonicMs();
      if (this.uncommittedBatches.length > 0) this.batchesCommitted(ready.committed[ready.committed.length - 1].index, started);
      const busyMs = await this.apply(ready.committed);
      if (this.stopped) return;
      observer.applied?.(ready.committed.length, busyMs);
    }

    if (this.failProposedAfterApply) {
      this.failProposedAfterApply = false;
      this.proposed.failAll(() => new LeadershipLostError());
    }

    // 4. Release reads.
    for (const rs of ready.readStates) this.reads.confirmed(rs.ctx, rs.index, this.applied);
    for (const ctx of ready.failedReads) this.reads.failed(ctx, new NotLeaderError(this.leader()));
    this.reads.appliedTo(this.applied);

    // 5. Advance, then compact if enough has been applied since the last snapshot.
    this.core.advance(ready);
    if (this.snapshots.due()) this.snapshots.take();
  }

  /**
   * Writes what `ready` asks to be durable: true once it is, false if the node stopped first.
   * On failure the node is faulted (see StorageFault) and the same writes are retried with backoff;
   * the core is neither stepped nor ticked meanwhile, so nothing it says later can overtake them.
   * Retrying is safe: both writes are idempotent (a store that may hold half of a failed write, like
   * LevelDB, is reopened by the store itself before it writes again).
   */
  private async persist(ready: Ready, install: Install | undefined): Promise<boolean> {
    let snapshotSaved = ready.snapshot === undefined;
    let appended = ready.hardState === undefined && ready.entries.length === 0;
    for (;;) {
      try {
        if (!snapshotSaved) {
          // A snapshot of ours still being persisted is older: it is dropped, never written after this.
          this.snapshots.installing(install!.meta.index);
          // The core restarts its log at the snapshot (it keeps no suffix), so the stored log goes too
          // (a sink the pieces were written into was made compacting to Infinity; its commit may be retried).
          if (install!.sink) await install!.sink.commit();
          else await this.opts.storage.saveSnapshot(install!.meta, install!.data!, Infinity);
          snapshotSaved = true;
        }
        if (!appended) {
          await this.opts.storage.append(ready.hardState, ready.entries);
          appended = true;
        }
        if (this.logFault.current) this.logRecovered();
        return !this.stopped;
      } catch (err) {
        if (this.stopped) return false;
        await this.logFault.waitRetry(this.logFailed(err));
        if (this.stopped) return false;
      }
    }
  }

  /** A Ready write failed: enter (or stay in) the fault; returns the delay before the next try. */
  private logFailed(err: unknown): number {
    const { fault, started, delay, cause } = this.logFault.failed(err);
    if (!started) {
      this.opts.logger.debug({ id: this.id, err: cause, retries: fault.retries, nextRetryMs: delay }, 'raft: storage still failing');
      return delay;
    }
    this.logError(
      { id: this.id, err: cause, role: this.core.role, term: this.core.term },
      'raft: storage failed; this server takes no part in Raft (no votes, appends, commits or applies) until the write succeeds — retrying',
    );
    // Nothing queued reaches the log; what is in the log may still commit through another server.
    const queued = this.queue;
    this.queue = [];
    for (const p of queued) p.reject(new StorageFaultError(fault.message));
    this.proposed.failAll(() => new StorageFaultError(fault.message, true));
    this.reads.failAll(() => new StorageFaultError(fault.message));
    this.emit('storage-fault', { ...fault });
    this.announceLeader();
    return delay;
  }

  private logRecovered(): void {
    const { recovery, lastError } = this.logFault.recovered(this.core.term);
    this.opts.logger.info({ id: this.id, downMs: recovery.downMs, retries: recovery.retries, lastError }, 'raft: storage recovered; taking part in Raft again');
    this.emit('storage-recovered', recovery);
    this.announceLeader();
    // The clock stood still: ticks resume with the next interval.
  }

  /** Emits 'leader' when leader() names another server than it last did. */
  private announceLeader(): void {
    const leader = this.leader();
    const id = leader?.id ?? null;
    if (id === this.announcedLeader) return;
    this.announcedLeader = id;
    this.emit('leader', leader);
  }

  private logError(o: object, msg: string): void {
    if (this.opts.logger.error) this.opts.logger.error(o, msg);
    else this.opts.logger.warn(o, msg);
  }

  /** Tell the observer about every proposal batch committed through `index` (leader only). */
  private batchesCommitted(index: number, now: number): void {
    let done = 0;
    while (done < this.uncommittedBatches.length && this.uncommittedBatches[done].last <= index) {
      const b = this.uncommittedBatches[done++];
      this.opts.observer.committed?.(b.entries, now - b.at);
    }
    if (done > 0) this.uncommittedBatches.splice(0, done);
  }

  /**
   * On the leader: how long ago (ms) each other server in the configuration last answered an append
   * or heartbeat of this term (Infinity: not yet). Empty on a follower.
   */
  followerLastContact(): { id: NodeId; address: string; ms: number }[] {
    if (!this.isLeader()) return [];
    const now = monotonicMs();
    return this.core.configuration.servers
      .filter((s) => s.id !== this.id)
      .map((s) => {
        const at = this.followerAnswers.get(s.id);
        return { id: s.id, address: s.address, ms: at === undefined ? Infinity : now - at };
      });
  }

  private onSoftState(role: Role, leader: NodeId | null): void {
    const wasLeader = this.role === 'leader';
    if (role !== this.role) {
      // A new term of leadership (or none) starts without the previous term's answers and batches.
      this.followerAnswers.clear();
      this.uncommittedBatches.length = 0;
      this.role = role;
      this.opts.logger.info({ id: this.id, role, term: this.core.term }, 'raft: role changed');
      this.emit('role', role);
    }
    if (wasLeader && role !== 'leader') {
      // Queued proposals never reached the log: they are refused as not-leader at once.
      const queued = this.queue;
      this.queue = [];
      for (const p of queued) p.reject(new NotLeaderError(null));
      // Proposals in the log are failed only after this Ready's committed entries are applied
      // (handleReady, step 3): a leader steps down in the same Ready that commits its own removal,
      // and the entries committed with it — that removal, ordinary writes — happened and must be
      // answered so, not "leadership lost" (issue #35). What is still pending after that has an
      // unknown outcome (etcd and hashicorp/raft behaviour).
      this.failProposedAfterApply = true;
    }
    if (leader !== this.leaderId) {
      this.leaderId = leader;
      if (leader !== null) {
        this.everHadLeader = true;
        if (leader !== this.id) this.lastLeaderContact = monotonicMs();
      }
      this.announceLeader();
    }
  }

  /**
   * A snapshot from the leader is on disk (persist() saved it): the state machine becomes it. Its
   * pieces are joined here only for a state machine without restoreFrom.
   */
  private async restoreSnapshot(snapshot: Install): Promise<void> {
    if (snapshot.sink) {
      // Written straight into the storage as the pieces came: read back from there, a piece at a time.
      const reader = await this.opts.storage.readSnapshot!();
      if (!reader || reader.meta.index !== snapshot.meta.index || reader.meta.term !== snapshot.meta.term) throw new Error('raft: the installed snapshot is not the stored one');
      try {
        if (this.opts.fsm.restoreFrom) await restoreWithProgress(this.opts, reader, snapshot.meta, reader.size, 'installed');
        else {
          const pieces: Uint8Array[] = [];
          for (let i = 0; i < reader.chunks; i++) pieces.push(await reader.read(i));
          this.opts.fsm.restore(joinSnapshot(pieces), snapshot.meta);
        }
      } finally {
        reader.close();
      }
      snapshot.data = [];
    } else if (this.opts.fsm.restoreFrom) {
      // Piece by piece, each let go once decoded (the pieces are on disk already): no joined copy.
      const data = snapshot.data!;
      const pieces: (Uint8Array | undefined)[] = data instanceof Uint8Array ? [data] : [...data];
      const size = snapshotSize(data);
      // The caller's object lets go of them too (the storage reads them back when a follower needs them).
      if (this.opts.storage.readSnapshot) snapshot.data = [];
      const source = {
        chunks: pieces.length,
        read: async (i: number) => {
          const piece = pieces[i];
          pieces[i] = undefined;
          if (!piece) throw new Error(`raft: snapshot piece ${i} read twice`);
          return piece;
        },
      };
      await restoreWithProgress(this.opts, source, snapshot.meta, size, 'installed');
    } else {
      this.opts.fsm.restore(joinSnapshot(snapshot.data!), snapshot.meta);
    }
    this.snapshots.installed(snapshot.meta, snapshot.data!);
    this.applied = snapshot.meta.index;
    this.learnAddresses(snapshot.meta.configuration);
    this.proposed.failThrough(snapshot.meta.index, () => new LeadershipLostError());
    this.counters.snapshotsInstalled++;
    this.opts.logger.info({ id: this.id, index: snapshot.meta.index }, 'raft: installed snapshot');
    this.emit('applied', this.applied);
  }

  /**
   * Applies `entries` in slices of about APPLY_SLICE_MS, yielding to the event loop between them
   * (issue #34: a restart hands the whole log after the snapshot — ten thousand entries and more —
   * to one Ready, and applying it in one go held the loop for a second on a busy machine; so can a
   * follower that was cut off for a while). Answers the ms the applies themselves took.
   */
  private async apply(entries: Entry[]): Promise<number> {
    let busyMs = 0;
    let from = 0;
    while (from < entries.length) {
      const started = monotonicMs();
      do {
        const to = Math.min(entries.length, from + APPLY_CHECK_EVERY);
        this.applySome(entries, from, to);
        from = to;
      } while (from < entries.length && monotonicMs() - started < APPLY_SLICE_MS);
      busyMs += monotonicMs() - started;
      this.emit('applied', this.applied);
      if (from < entries.length) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.stopped) break;
      }
    }
    return busyMs;
  }

  /** Applies entries[from, to) (those a snapshot installed meanwhile does not cover). */
  private applySome(entries: Entry[], from: number, to: number): void {
    const lost = () => new LeadershipLostError();
    let count = 0;
    for (let i = from; i < to; i++) {
      const e = entries[i];
      if (e.index <= this.applied) continue; // covered by a snapshot installed meanwhile
      let outcome: { result: unknown } | { error: Error } = { result: undefined };
      if (e.type === EntryType.Normal) {
        try {
          outcome = { result: this.opts.fsm.apply(e.index, e.data) };
        } catch (err) {
          // A state machine that throws is a bug in it; the proposer hears about it, the log moves on.
          this.opts.logger.warn({ err, index: e.index }, 'raft: state machine apply threw');
          outcome = { error: err instanceof Error ? err : new Error(String(err)) };
        }
      }
      this.applied = e.index;
      count++;
      this.proposed.applied(e.index, e.term, outcome, lost);
    }
    this.snapshots.applied(count);
    this.counters.appliedEntries += to - from;
  }

  /**
   * Sends `messages` on the next tick: the proposers' answers, written by promise chains that the
   * apply below resolves, are queued for the socket before them (the tick queue runs once the
   * microtasks are done).
   */
  private deferSends(messages: Message[]): void {
    if (messages.length === 0) return;
    const first = this.deferredSends.length === 0;
    this.deferredSends.push(...messages);
    if (first) process.nextTick(() => this.flushDeferredSends());
  }

  private flushDeferredSends(): void {
    const held = this.deferredSends;
    if (held.length === 0) return;
    this.deferredSends = [];
    if (this.stopped) return;
    for (const m of held) this.sendMessage(m);
  }

  private sendMessage(m: Message): void {
    // Messages held back by an earlier Ready go first: a follower must see them in order.
    if (this.deferredSends.length > 0) this.flushDeferredSends();
    const address = this.addresses.get(m.to);
    if (!address) {
      this.opts.logger.debug({ to: m.to, type: m.type }, 'raft: no address for recipient');
      return;
    }
    if (m.type === 'snapshot') {
      // The core names a snapshot; the bytes (and the meta they belong to) are the latest stored,
      // sent in pieces (snapshot-transfer.ts).
      this.snapshotSender.send({ id: m.to, address }, m);
      return;
    }
    this.opts.transport.send({ id: m.to, address }, m);
  }

  private learnAddresses(configuration: Configuration): void {
    for (const s of configuration.servers) if (s.address) this.addresses.set(s.id, s.address);
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

/**
 * The proposals' bytes copied into one buffer of exactly their size, each entry a view of it. A
 * proposal is often a view into a much larger buffer (msgpackr packs into a shared working buffer of
 * up to hundreds of KB), and the log keeps its entries until a snapshot compacts them: at 100,000
 * catalog nodes the leader's log of 40 MiB held 170 MiB of such buffers alive (docs/benchmarks/history.md,
 * *Large catalog*). One copy per batch, not per entry: a batch is compacted together.
 */
function ownBytes(batch: readonly { data: Uint8Array }[]): Uint8Array[] {
  let size = 0;
  for (const p of batch) size += p.data.byteLength;
  const all = new Uint8Array(size);
  const out: Uint8Array[] = new Array(batch.length);
  let at = 0;
  for (let i = 0; i < batch.length; i++) {
    const data = batch[i].data;
    all.set(data, at);
    out[i] = all.subarray(at, at + data.byteLength);
    at += data.byteLength;
  }
  return out;
}

/**
 * fsm.restoreFrom(source), saying what it does: a line when it starts and when it is done, and one
 * at most every 2 s in between with the pieces read so far (a restart at a large state is otherwise
 * silent for seconds: issue #34).
 */
async function restoreWithProgress(
  opts: Pick<ResolvedOptions, 'fsm' | 'logger' | 'id'>,
  source: SnapshotSource,
  meta: SnapshotMeta,
  bytes: number,
  what: 'stored' | 'installed',
): Promise<void> {
  const started = monotonicMs();
  const mib = (n: number) => Math.round((n / (1 << 20)) * 10) / 10;
  opts.logger.info({ id: opts.id, index: meta.index, mib: mib(bytes), pieces: source.chunks }, `raft: restoring the ${what} snapshot`);
  let lastLine = started;
  let read = 0;
  let readBytes = 0;
  const counted: SnapshotSource = {
    chunks: source.chunks,
    read: async (i) => {
      const piece = await source.read(i);
      read++;
      readBytes += piece.length;
      const now = monotonicMs();
      if (now - lastLine >= 2_000) {
        lastLine = now;
        opts.logger.info({ id: opts.id, index: meta.index, pieces: `${read}/${source.chunks}`, mib: mib(readBytes), ms: Math.round(now - started) }, `raft: restoring the ${what} snapshot`);
      }
      return piece;
    },
  };
  await opts.fsm.restoreFrom!(counted, meta);
  opts.logger.info({ id: opts.id, index: meta.index, mib: mib(bytes), ms: Math.round(monotonicMs() - started) }, `raft: restored the ${what} snapshot`);
}
