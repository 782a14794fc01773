// The small interfaces a RaftNode is wired from (hashicorp/raft's shape):
// the state machine, the durable log/stable storage, and the transport.
import type { Caller } from './transport/sender-address';
import type { Entry, HardState, Message, NodeId, ServerInfo, SnapshotMeta } from './core/types';

/** The replicated state machine. Called on every server, in log order, exactly once per entry. */
export interface StateMachine {
  /**
   * Apply one committed command. The return value resolves the proposer's promise (leader only).
   * A NotReady instead applies nothing: the driver waits for its promise and calls apply() with the
   * same entry again (an entry that names data this server must first fetch or load).
   */
  apply(index: number, data: Uint8Array): unknown;
  /**
   * The whole state as of the last applied index: either its bytes, serialised now (the event loop
   * is blocked for as long as that takes), or — hashicorp/raft's FSM.Snapshot() — a point-in-time
   * handle, cheap to take, that the driver persists while later entries are applied.
   */
  snapshot(): Uint8Array | FSMSnapshot;
  /** Replace the whole state with a snapshot's. */
  restore(data: Uint8Array, meta: SnapshotMeta): void;
  /**
   * Optional: restore() from the snapshot's pieces, read in order one at a time through `source`
   * (their concatenation is the snapshot's bytes). A state machine that has it is restored this way
   * on a restart (from storage that can readSnapshot) and on an install, so the snapshot's bytes are
   * never joined into one buffer. The driver waits for it before doing anything else.
   */
  restoreFrom?(source: SnapshotSource, meta: SnapshotMeta): Promise<void>;
}

/**
 * What apply() answers for an entry it cannot apply yet: nothing of it was applied, and the driver
 * applies nothing after it until `until` settles, then offers the entry again. Every server still
 * applies every entry once, in order; one that waits only falls behind, as a slow one does. For a
 * snapshot restore that names a state file staged on every server (server/snapshot/restore-staging.ts):
 * a server without the file fetches it, one without the decoded state loads it, in slices, first.
 */
export class NotReady {
  constructor(readonly until: Promise<unknown>) {}
}

/** A snapshot's pieces, read in order (a stored snapshot's reader, or the pieces of a transfer). */
export interface SnapshotSource {
  /** Number of pieces. */
  readonly chunks: number;
  /** Piece `i` (0 ≤ i < chunks). */
  read(i: number): Promise<Uint8Array>;
  /** Total bytes, where readRange is offered. */
  readonly size?: number;
  /**
   * Optional (a stored snapshot): the bytes from `offset` read into all of `into`, memory the caller
   * chose — a restore reads a large snapshot into a few buffers allocated at once and keeps its values
   * there (store/kv/value-arenas.ts, issue #34). Called in order, each byte once; use either this or read().
   */
  readRange?(offset: number, into: Uint8Array): Promise<void>;
}

/**
 * A point-in-time snapshot of a StateMachine (hashicorp/raft's FSMSnapshot). `persist()` runs
 * concurrently with further `apply()` calls and must still give the state as of the snapshot.
 */
export interface FSMSnapshot {
  /** The state as of the snapshot, serialised (without blocking the event loop for long). */
  persist(): Promise<Uint8Array>;
  /**
   * The same bytes, written into `sink` piece by piece (hashicorp/raft's Persist(sink)): a state
   * machine that can, never holds the whole snapshot in memory at once. Optional; the driver uses it
   * when both the state machine and the storage (createSnapshot) can stream.
   */
  persistTo?(sink: SnapshotSink): Promise<void>;
  /** The driver is done with the handle, persisted or not; a persist() under way may reject. */
  release(): void;
  /** Event-loop milliseconds persist() took, once it resolved (spaces snapshots; wall time if absent). */
  readonly costMs?: number;
}

/**
 * A snapshot's bytes: one buffer, or pieces whose concatenation is the bytes. Either way the bytes
 * are the state machine's own format; chunking is only how they are stored and sent.
 */
export type SnapshotData = Uint8Array | readonly Uint8Array[];

/** Where a snapshot's bytes go, in order, piece by piece (hashicorp/raft's SnapshotSink). */
export interface SnapshotSink {
  /**
   * Appends `chunk`. Once the promise resolves the sink holds no reference to the chunk's memory
   * (it wrote or copied it), so the writer may reuse it for the next piece.
   */
  write(chunk: Uint8Array): Promise<void>;
}

/** A snapshot being written into storage: invisible until commit(). */
export interface StorageSnapshotSink extends SnapshotSink {
  /**
   * Every piece is written: this becomes the stored snapshot, atomically replacing the previous
   * one, and log entries up to `compactTo` go (as saveSnapshot). A crash before it leaves the
   * previous snapshot as it was.
   */
  commit(): Promise<void>;
  /** Give up: the previous snapshot stays; what was written of this one is removed. */
  abort(): Promise<void>;
  /** Bytes written so far. */
  readonly size: number;
}

/** The stored snapshot, read a piece at a time (sending it to a follower needs no whole copy). */
export interface SnapshotReader extends SnapshotSource {
  readonly meta: SnapshotMeta;
  /** Total bytes. */
  readonly size: number;
  /** Piece `i` (0 ≤ i < chunks); rejects if the snapshot was replaced meanwhile. */
  read(i: number): Promise<Uint8Array>;
  /**
   * The caller is done with a piece read() gave it and keeps no reference into it: the reader may
   * read a later piece into the same memory (a leader sending a large snapshot allocated 1 MiB per
   * piece, and the garbage cost it major GCs of its whole state, issue #34). Optional both ways.
   */
  release?(piece: Uint8Array): void;
  close(): void;
}

/** What a server finds on disk when it starts. */
export interface PersistedState {
  hardState: HardState;
  snapshot?: { meta: SnapshotMeta; data: Uint8Array };
  /** Log entries after the snapshot, in order. */
  entries: Entry[];
}

/** PersistedState without the snapshot's bytes (loadWithoutSnapshotData). */
export interface PersistedStateMeta {
  hardState: HardState;
  snapshot?: { meta: SnapshotMeta };
  entries: Entry[];
}

/**
 * Durable storage of the Raft log, term/vote/commit and snapshots. Every write of entries, term or
 * vote is synced; a hard state that only advances `commit` may ride with the next synced batch
 * (commit is recoverable from the leader, as in etcd).
 *
 * Failures: a write that rejects (a full disk, no file descriptors left) is retried by RaftNode
 * with the same arguments until it succeeds, and nothing that depends on it is sent or applied
 * meanwhile. So a store must make such a retry correct — each write idempotent, a term or vote
 * whose write failed never treated as already written — and must not let a failed write make a
 * later successful one unreliable (LevelStorage reopens LevelDB before writing again).
 */
export interface RaftStorage {
  load(): Promise<PersistedState>;
  /**
   * One atomic, synced write: the hard state and entries to append. Entries replace any stored
   * entries at the same or higher index (a follower overwriting a conflicting suffix).
   */
  append(hardState: HardState | undefined, entries: Entry[]): Promise<void>;
  /**
   * Store a snapshot and drop log entries up to `compactTo` (inclusive), atomically.
   * `compactTo = Infinity` drops the whole log (a snapshot installed from the leader replaces it).
   * `data` may be pieces (their concatenation is the snapshot); load() gives the bytes back whole.
   */
  saveSnapshot(meta: SnapshotMeta, data: SnapshotData, compactTo: number): Promise<void>;
  /**
   * Optional streaming form of saveSnapshot: the pieces are written as they come and the snapshot
   * replaces the stored one only at commit(). A storage without it gets saveSnapshot() instead.
   */
  createSnapshot?(meta: SnapshotMeta, compactTo: number): StorageSnapshotSink;
  /**
   * Optional: the stored snapshot a piece at a time, or undefined when there is none. With it the
   * driver keeps no copy of the snapshot's bytes in memory; without it, it keeps the last one.
   */
  readSnapshot?(): Promise<SnapshotReader | undefined>;
  /**
   * Optional, with readSnapshot: load() with the snapshot's meta only, its bytes left in storage
   * for readSnapshot() to hand out a piece at a time (a restart that restores from them never holds
   * the snapshot whole).
   */
  loadWithoutSnapshotData?(): Promise<PersistedStateMeta>;
  close(): Promise<void>;
}

/** Raft messages and internal RPC between servers over one port. */
export interface Transport {
  /** The address others reach this server by (advertised, never a wildcard bind address). */
  readonly address: string;
  /** Fire-and-forget; delivery is not guaranteed (Raft tolerates loss). */
  send(to: ServerInfo, message: Message): void;
  /** Messages sent so far may be batched until the event loop turns: write them out now (optional). */
  flush?(): void;
  /**
   * `fromAddress` is the sender's advertised transport address, so a server that is not yet in any
   * configuration (just added) can answer the leader; undefined when the frame named none that can
   * be dialled back (transport/sender-address.ts).
   */
  onMessage(handler: (message: Message, fromAddress?: string) => void): void;
  /** Request/response to another server's RPC handler by method name. */
  call(address: string, method: string, body: unknown, timeoutMs?: number, options?: CallOptions): Promise<unknown>;
  /** `caller` says where a request came from, for handlers that record the sender's address. */
  handle(method: string, handler: (body: unknown, caller: Caller) => Promise<unknown> | unknown): void;
  close(): Promise<void>;
}

export interface CallOptions {
  /**
   * The request must not arrive after its timeout (a write copy whose budget it is): when no answer
   * came in time, the connection is reset, which discards what the kernel still holds to send — a
   * frame re-sent into a black-holed link would otherwise be delivered whenever the link heals.
   * Other calls in flight on that connection fail as on any lost connection.
   */
  discardOnTimeout?: boolean;
}

export class NotLeaderError extends Error {
  constructor(readonly leader: ServerInfo | null) {
    super(leader ? `not the leader (leader is ${leader.address})` : 'No cluster leader');
    this.name = 'NotLeaderError';
  }
}

/** A membership change refused as premature: a learner not yet caught up (retry later). */
export class NotCaughtUpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotCaughtUpError';
  }
}

export class NodeStoppedError extends Error {
  constructor() {
    super('raft node stopped');
    this.name = 'NodeStoppedError';
  }
}

export class LeadershipLostError extends Error {
  constructor() {
    super('leadership lost while the command was in flight');
    this.name = 'LeadershipLostError';
  }
}

export type { NodeId };
