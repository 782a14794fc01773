// Sending a snapshot to a follower in pieces (the Raft paper's InstallSnapshot with `offset` and
// `done`, Figure 13), so that neither server holds it as one buffer while it travels: the leader
// reads the stored snapshot a piece at a time and sends each as one request, up to PIECES_IN_FLIGHT
// before the oldest is answered (that is the flow control: a round trip per piece cost ~40 % of a
// 512 MiB transfer, issue #34; one connection keeps them in order, and a piece that does not
// continue the transfer is refused, so a lost one fails the rest); the follower collects the pieces of one transfer and,
// when the last arrives, hands the core the snapshot message it would have got whole. Its driver
// then stores the pieces (log-writer.ts) and restores the state machine from them (fsm-apply.ts).
//
// Restarting: a transfer is named by the leader, its term and a counter. A piece that does not
// continue the follower's transfer exactly (another transfer's, a lost one before it, an old term's)
// is refused and the leader drops its transfer; the core sends the snapshot again once its probe
// times out, and that transfer starts over at offset 0, which discards the pieces of the follower's
// unfinished transfer. A new leader's transfer replaces an old leader's the same way. A snapshot
// whose every piece is in is kept until the driver takes it or has applied past it, whatever
// transfer comes next: the core may hold it in a Ready the driver has not reached yet. Nothing reaches the core or the
// state machine before the last piece of a transfer is in. A follower whose storage streams
// (createSnapshot) writes each piece straight into a new snapshot file as it arrives — it holds
// none of them in memory (issue #34: a wiped follower held the whole state) — and that file becomes
// the stored snapshot only when the core installs it; a transfer dropped midway aborts it. (Decoding
// the pieces as they came, beside the current state, made a wiped follower's catch-up slower at
// 512 MiB, not faster, and was removed: docs/raft.md.)
import type { Message, NodeId, ServerInfo, SnapshotMeta } from '../core/types';
import type { SnapshotData, SnapshotReader, StorageSnapshotSink, Transport } from '../interfaces';
import { joinSnapshot } from '../storage/snapshot-chunks';
import { RemoteError } from '../transport/rpc-errors';
import type { RaftLogger } from './options';
import { monotonicMs } from '../monotonic-clock';

export type SnapshotMessage = Extract<Message, { type: 'snapshot' }>;

/** The RPC method a piece travels by. */
export const INSTALL_SNAPSHOT = 'raft.installSnapshot';

/** One piece of a snapshot on its way to a follower. */
export interface InstallSnapshotPiece {
  from: NodeId;
  to: NodeId;
  term: number;
  /** The stamp of the core's latest snapshot message for this follower (its answer echoes it). */
  seq?: number;
  meta: SnapshotMeta;
  /** Which transfer the piece belongs to. */
  transfer: string;
  /** Where `data` starts in the snapshot's bytes, and their total. */
  offset: number;
  size: number;
  done: boolean;
  data: Uint8Array;
}

export interface InstallSnapshotReply {
  ok: boolean;
  /** The follower's term (a leader that sees a newer one stops sending). */
  term: number;
  reason?: string;
}

/**
 * Pieces a leader sends before the first of them is answered. Enough to keep the link busy while
 * the follower writes and decodes (8 MiB at the default piece size: a leader's memory for a
 * transfer stays this, plus the frames being encoded), few enough that a heartbeat on the same
 * connection waits behind at most that much.
 */
export const PIECES_IN_FLIGHT = 8;
/** How long after a follower acknowledged a whole transfer the leader does not start another to it (it is installing). */
const INSTALLING_GRACE_MS = 15_000;
/** How long a leader waits for a piece's answer before it drops the transfer. */
const PIECE_TIMEOUT_MS = 10_000;
/** A follower drops the pieces of a transfer that has had no piece for this long (its leader is gone). */
const IDLE_TRANSFER_MS = 30_000;

interface SenderDeps {
  id: NodeId;
  transport: Transport;
  logger: RaftLogger;
  /** Largest piece sent. */
  pieceBytes: number;
  /** The snapshot to send, read a piece at a time. */
  open(): Promise<SnapshotReader | undefined>;
  /** Whether this server still leads in `term` (a transfer stops as soon as it does not). */
  leading(term: number): boolean;
  /** The highest index follower `id` has acknowledged to this leader (its Raft match). */
  matched(id: NodeId): number;
}

interface Transfer {
  term: number;
  seq?: number;
  cancelled: boolean;
}

/** The leader's side: at most one transfer per follower. */
export class SnapshotSender {
  private readonly active = new Map<NodeId, Transfer>();
  /**
   * Per follower: the term, snapshot index and time (monotonicMs()) its last transfer's every piece
   * was acknowledged.
   */
  private readonly delivered = new Map<NodeId, { term: number; index: number; at: number }>();
  private counter = 0;

  constructor(private readonly deps: SenderDeps) {}

  /** The core wants `to` to get the snapshot (`m` names it). A transfer under way in this term goes on. */
  send(to: ServerInfo, m: SnapshotMessage): void {
    const current = this.active.get(to.id);
    if (current && !current.cancelled && current.term === m.term) {
      // The core re-sent it (its probe timed out while the pieces were travelling): the transfer's
      // last piece carries the newest stamp, so the answer counts as fresh.
      current.seq = m.seq;
      return;
    }
    if (current) current.cancelled = true;
    const last = this.delivered.get(to.id);
    const installing = last !== undefined && last.term === m.term && this.deps.matched(to.id) < last.index;
    if (!current && installing && monotonicMs() - last!.at < INSTALLING_GRACE_MS) {
      // The follower has every piece and is installing them (a large state takes seconds to commit
      // and swap in): sending it all again would only be ignored. (Seen at 512 MiB: a second whole
      // transfer started while the follower restored the first.) After the grace, the core's next
      // probe sends it again, should the follower have lost it. Once the follower has acknowledged
      // that snapshot, it is installed, and the core asks again only because the log it would
      // continue from was compacted meanwhile: the newer snapshot goes at once (the grace held it
      // back for 15 s, seen as a follower stuck after its install in a loaded test run).
      return;
    }
    const transfer: Transfer = { term: m.term, seq: m.seq, cancelled: false };
    this.active.set(to.id, transfer);
    void this.run(to, m, transfer)
      .catch((err: unknown) => {
        this.deps.logger.debug({ to: to.id, err: err instanceof Error ? err.message : String(err) }, 'raft: snapshot transfer stopped; it starts over when the leader sends the snapshot again');
      })
      .finally(() => {
        if (this.active.get(to.id) === transfer) this.active.delete(to.id);
      });
  }

  /** Stops every transfer (the node stops, or no longer leads). */
  cancelAll(): void {
    for (const t of this.active.values()) t.cancelled = true;
    this.active.clear();
    this.delivered.clear();
  }

  private async run(to: ServerInfo, m: SnapshotMessage, transfer: Transfer): Promise<void> {
    const { pieceBytes } = this.deps;
    const reader = await this.deps.open();
    if (!reader) {
      this.deps.logger.warn({ to: to.id }, 'raft: core asked to send a snapshot but none is stored');
      return;
    }
    /** Pieces sent whose answer has not come, oldest first (at most PIECES_IN_FLIGHT). */
    const inFlight: Promise<void>[] = [];
    try {
      const name = `${this.deps.id}/${transfer.term}/${reader.meta.index}/${++this.counter}`;
      const started = monotonicMs();
      let offset = 0;
      let pieces = 0;
      let firstAnswered = false;
      for (let i = 0; i < reader.chunks || (i === 0 && reader.size === 0); i++) {
        const stored = reader.size === 0 ? new Uint8Array(0) : await reader.read(i);
        for (let at = 0; at < stored.length || (at === 0 && stored.length === 0); at += pieceBytes) {
          if (transfer.cancelled || !this.deps.leading(transfer.term)) return;
          const data = stored.subarray(at, Math.min(stored.length, at + pieceBytes));
          const lastOfStored = at + pieceBytes >= stored.length;
          // `data` last: the transport sends a bulk last field without copying it (frame-codec.ts).
          const piece: InstallSnapshotPiece = {
            from: this.deps.id,
            to: to.id,
            term: transfer.term,
            ...(transfer.seq !== undefined ? { seq: transfer.seq } : {}),
            meta: reader.meta,
            transfer: name,
            offset,
            size: reader.size,
            done: offset + data.length >= reader.size,
            data,
          };
          if (!firstAnswered) {
            // The first piece alone: a follower of a version without pieces says so to it, and
            // gets the whole snapshot in one message instead.
            try {
              await this.sendPiece(to, piece);
            } catch (err) {
              if (isUnknownMethod(err)) return this.sendWhole(to, m, reader);
              throw err;
            }
            firstAnswered = true;
            if (lastOfStored) reader.release?.(stored);
          } else {
            // The rest travel PIECES_IN_FLIGHT at a time (one connection keeps them in order): a
            // round trip per piece was ~40 % of a 512 MiB transfer (issue #34).
            if (inFlight.length >= PIECES_IN_FLIGHT) await inFlight.shift();
            if (transfer.cancelled || !this.deps.leading(transfer.term)) return;
            const sent = this.sendPiece(to, piece);
            // Answered, the piece has left this server: its memory can hold a later piece. (Not
            // when it failed: a timed-out piece may still be in the socket's queue.)
            if (lastOfStored) void sent.then(() => reader.release?.(stored), () => undefined);
            // Seen by the await above or below; until then a refusal must not be unhandled.
            sent.catch(() => undefined);
            inFlight.push(sent);
          }
          offset += data.length;
          pieces++;
          if (stored.length === 0) break;
        }
      }
      while (inFlight.length > 0) await inFlight.shift();
      this.delivered.set(to.id, { term: transfer.term, index: reader.meta.index, at: monotonicMs() });
      this.deps.logger.info({ to: to.id, index: reader.meta.index, bytes: reader.size, pieces, ms: monotonicMs() - started }, 'raft: sent snapshot');
    } finally {
      // A piece refused or lost: the ones after it are refused too (they do not continue the
      // transfer); they are only waited for so that the reader is not closed under them.
      await Promise.allSettled(inFlight);
      reader.close();
    }
  }

  /** One piece, resolved once the follower has it (rejects when it refuses it). */
  private async sendPiece(to: ServerInfo, piece: InstallSnapshotPiece): Promise<void> {
    const reply = (await this.deps.transport.call(to.address, INSTALL_SNAPSHOT, piece, PIECE_TIMEOUT_MS)) as InstallSnapshotReply;
    if (!reply?.ok) throw new Error(`follower refused piece at ${piece.offset}: ${reply?.reason ?? 'no reason given'}`);
  }

  /** A follower of a version without pieces: the whole snapshot in one message, as before. */
  private async sendWhole(to: ServerInfo, m: SnapshotMessage, reader: SnapshotReader): Promise<void> {
    const pieces: Uint8Array[] = [];
    for (let i = 0; i < reader.chunks; i++) pieces.push(await reader.read(i));
    this.deps.transport.send(to, { ...m, meta: reader.meta, data: joinSnapshot(pieces) });
  }
}

function isUnknownMethod(err: unknown): boolean {
  return err instanceof RemoteError && err.message.includes('unknown rpc method');
}

interface ReceiverDeps {
  /** The follower's current term. */
  term(): number;
  /** False while the node cannot take part in Raft (stopped, storage fault). */
  accepting(): boolean;
  /** Steps the core with the snapshot message, once every piece is in. */
  deliver(m: SnapshotMessage): void;
  /** Why pieces from `from` are not taken (a stranger, stranger-filter.ts), or null. */
  refuses?(from: string, term: number): string | null;
  /** A storage sink for a snapshot from the leader (compacting the whole log), when the storage streams. */
  createSink?(meta: SnapshotMeta): StorageSnapshotSink;
  /** A line when a transfer starts and when its last piece is in (where a catch-up's time goes). */
  logger?: RaftLogger;
}

/** What a finished transfer hands the driver: the pieces, or the sink they were written into (not yet committed). */
export type ReceivedSnapshot = { pieces: SnapshotData } | { sink: StorageSnapshotSink };

interface PartialTransfer {
  transfer: string;
  pieces: Uint8Array[];
  sink: StorageSnapshotSink | null;
  received: number;
  started: number;
}

/** The follower's side: the pieces of the current transfer, then the assembled snapshot. */
export class SnapshotReceiver {
  private partial: PartialTransfer | null = null;
  /**
   * Snapshots assembled and handed to the core but not yet taken by the driver, by index/term. A
   * new transfer does not drop them: the core may already hold one in a Ready the driver has not
   * reached (a Ready before it is still being written), and without its pieces the driver would
   * have nothing to install. They go when taken, or once the driver has applied past them.
   */
  private readonly assembled = new Map<string, { meta: SnapshotMeta; received: ReceivedSnapshot }>();
  /** Drops an abandoned transfer's pieces (up to a whole snapshot's worth of memory, or a file). */
  private idle: NodeJS.Timeout | null = null;
  /** Pieces are taken one at a time (a sink's write is asynchronous). */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ReceiverDeps) {}

  receive(body: unknown): Promise<InstallSnapshotReply> {
    const run = this.tail.then(() => this.receiveOne(body));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async receiveOne(body: unknown): Promise<InstallSnapshotReply> {
    const p = body as InstallSnapshotPiece;
    const term = this.deps.term();
    if (!this.deps.accepting()) return { ok: false, term, reason: 'not taking part in raft' };
    if (!p || typeof p.offset !== 'number' || !(p.data instanceof Uint8Array) || !p.meta || typeof p.from !== 'string' || typeof p.term !== 'number') return { ok: false, term, reason: 'malformed piece' };
    // Checked at every piece, not only the last: a stranger's pieces are not even held.
    const refused = this.deps.refuses?.(p.from, p.term);
    if (refused) return { ok: false, term, reason: refused };
    if (p.term < term) return { ok: false, term, reason: `stale term ${p.term} < ${term}` };
    if (p.offset === 0) {
      // A new transfer (a restart, a new leader): the pieces of an unfinished one are dropped. An
      // assembled snapshot is kept: the core may be about to install it (take()).
      this.dropPartial();
      this.partial = { transfer: p.transfer, pieces: [], sink: this.deps.createSink?.(p.meta) ?? null, received: 0, started: monotonicMs() };
      this.deps.logger?.info({ from: p.from, index: p.meta.index, bytes: p.size }, 'raft: receiving a snapshot');
    } else if (!this.partial || this.partial.transfer !== p.transfer || this.partial.received !== p.offset) {
      this.dropPartial();
      return { ok: false, term, reason: 'piece does not continue the transfer' };
    }
    const partial = this.partial!;
    if (p.data.length > 0) {
      if (partial.sink) {
        try {
          await partial.sink.write(p.data);
        } catch (err) {
          if (this.partial === partial) this.dropPartial();
          return { ok: false, term, reason: `writing the piece failed: ${err instanceof Error ? err.message : String(err)}` };
        }
        if (this.partial !== partial) return { ok: false, term, reason: 'transfer dropped' };
      } else {
        partial.pieces.push(p.data);
      }
    }
    partial.received += p.data.length;
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    if (!p.done) {
      this.idle = setTimeout(() => {
        if (this.partial === partial) this.dropPartial();
      }, IDLE_TRANSFER_MS);
      this.idle.unref?.();
      return { ok: true, term };
    }
    this.partial = null;
    if (partial.received !== p.size) {
      void partial.sink?.abort().catch(() => undefined);
      return { ok: false, term, reason: `received ${partial.received} of ${p.size} bytes` };
    }
    this.deps.logger?.info({ from: p.from, index: p.meta.index, bytes: p.size, ms: Math.round(monotonicMs() - partial.started) }, 'raft: received snapshot');
    const assembled = { meta: p.meta, received: partial.sink ? { sink: partial.sink } : { pieces: partial.pieces } };
    const key = keyOf(p.meta);
    // The same snapshot again (the leader sent it anew): the newer copy replaces the older one.
    const before = this.assembled.get(key);
    if (before) discard(before.received);
    this.assembled.set(key, assembled);
    const m: SnapshotMessage = { type: 'snapshot', from: p.from, to: p.to, term: p.term, meta: p.meta };
    if (p.seq !== undefined) m.seq = p.seq;
    this.deps.deliver(m);
    return { ok: true, term: this.deps.term() };
  }

  /**
   * The snapshot `meta` names, if it was assembled and not yet taken (taken once). Older ones
   * assembled before it go: the core installs `meta`, so it will never ask for them.
   */
  take(meta: SnapshotMeta): ReceivedSnapshot | undefined {
    const a = this.assembled.get(keyOf(meta));
    if (!a) return undefined;
    this.assembled.delete(keyOf(meta));
    this.dropAssembled((m) => m.index < meta.index);
    return a.received;
  }

  /**
   * The driver has applied through `applied`: the core never installs a snapshot at or below its
   * commit index, so assembled ones there are let go (their files removed).
   */
  settled(applied: number): void {
    if (this.assembled.size > 0) this.dropAssembled((m) => m.index <= applied);
  }

  /** Drops a transfer under way and every snapshot nobody took (the node stops). */
  clear(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    this.dropPartial();
    this.dropAssembled(() => true);
  }

  private dropAssembled(which: (meta: SnapshotMeta) => boolean): void {
    for (const [key, a] of this.assembled) {
      if (!which(a.meta)) continue;
      this.assembled.delete(key);
      discard(a.received);
    }
  }

  private dropPartial(): void {
    const p = this.partial;
    this.partial = null;
    void p?.sink?.abort().catch(() => undefined);
  }
}

function keyOf(meta: SnapshotMeta): string {
  return `${meta.index}/${meta.term}`;
}

/** An assembled snapshot nobody will install: a file its pieces were written into is removed. */
function discard(received: ReceivedSnapshot): void {
  if ('sink' in received) void received.sink.abort().catch(() => undefined);
}
