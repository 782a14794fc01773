// Sending a snapshot to a follower in pieces (the Raft paper's InstallSnapshot with `offset` and
// `done`, Figure 13), so that neither server holds it as one buffer while it travels: the leader
// reads the stored snapshot a piece at a time and sends each as one request, waiting for its answer
// before the next (that is the flow control); the follower collects the pieces of one transfer and,
// when the last arrives, hands the core the snapshot message it would have got whole. Its driver
// then stores the pieces (log-writer.ts) and restores the state machine from them (fsm-apply.ts).
//
// Restarting: a transfer is named by the leader, its term and a counter. A piece that does not
// continue the follower's transfer exactly (another transfer's, a lost one before it, an old term's)
// is refused and the leader drops its transfer; the core sends the snapshot again once its probe
// times out, and that transfer starts over at offset 0, which discards whatever the follower held.
// A new leader's transfer replaces an old leader's the same way. Nothing reaches the core or the
// state machine before the last piece of a transfer is in. A follower whose storage streams
// (createSnapshot) writes each piece straight into a new snapshot file as it arrives — it holds
// none of them in memory (issue #34: a wiped follower held the whole state) — and that file becomes
// the stored snapshot only when the core installs it; a transfer dropped midway aborts it.
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
}

interface Transfer {
  term: number;
  seq?: number;
  cancelled: boolean;
}

/** The leader's side: at most one transfer per follower. */
export class SnapshotSender {
  private readonly active = new Map<NodeId, Transfer>();
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
  }

  private async run(to: ServerInfo, m: SnapshotMessage, transfer: Transfer): Promise<void> {
    const { transport, pieceBytes } = this.deps;
    const reader = await this.deps.open();
    if (!reader) {
      this.deps.logger.warn({ to: to.id }, 'raft: core asked to send a snapshot but none is stored');
      return;
    }
    try {
      const name = `${this.deps.id}/${transfer.term}/${reader.meta.index}/${++this.counter}`;
      const started = monotonicMs();
      let offset = 0;
      let pieces = 0;
      for (let i = 0; i < reader.chunks || (i === 0 && reader.size === 0); i++) {
        const stored = reader.size === 0 ? new Uint8Array(0) : await reader.read(i);
        for (let at = 0; at < stored.length || (at === 0 && stored.length === 0); at += pieceBytes) {
          if (transfer.cancelled || !this.deps.leading(transfer.term)) return;
          const data = stored.subarray(at, Math.min(stored.length, at + pieceBytes));
          const piece: InstallSnapshotPiece = {
            from: this.deps.id,
            to: to.id,
            term: transfer.term,
            meta: reader.meta,
            transfer: name,
            offset,
            size: reader.size,
            done: offset + data.length >= reader.size,
            data,
          };
          if (transfer.seq !== undefined) piece.seq = transfer.seq;
          let reply: InstallSnapshotReply;
          try {
            reply = (await transport.call(to.address, INSTALL_SNAPSHOT, piece, PIECE_TIMEOUT_MS)) as InstallSnapshotReply;
          } catch (err) {
            if (offset === 0 && isUnknownMethod(err)) return this.sendWhole(to, m, reader);
            throw err;
          }
          if (!reply?.ok) throw new Error(`follower refused piece at ${offset}: ${reply?.reason ?? 'no reason given'}`);
          offset += data.length;
          pieces++;
          if (stored.length === 0) break;
        }
      }
      this.deps.logger.info({ to: to.id, index: reader.meta.index, bytes: reader.size, pieces, ms: monotonicMs() - started }, 'raft: sent snapshot');
    } finally {
      reader.close();
    }
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
}

/** What a finished transfer hands the driver: the pieces, or the sink they were written into (not yet committed). */
export type ReceivedSnapshot = { pieces: SnapshotData } | { sink: StorageSnapshotSink };

interface PartialTransfer {
  transfer: string;
  pieces: Uint8Array[];
  sink: StorageSnapshotSink | null;
  received: number;
}

/** The follower's side: the pieces of the current transfer, then the assembled snapshot. */
export class SnapshotReceiver {
  private partial: PartialTransfer | null = null;
  private assembled: { meta: SnapshotMeta; received: ReceivedSnapshot } | null = null;
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
      // A new transfer (a restart, a new leader): what an earlier one brought is dropped.
      this.drop();
      this.partial = { transfer: p.transfer, pieces: [], sink: this.deps.createSink?.(p.meta) ?? null, received: 0 };
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
    this.assembled = { meta: p.meta, received: partial.sink ? { sink: partial.sink } : { pieces: partial.pieces } };
    const m: SnapshotMessage = { type: 'snapshot', from: p.from, to: p.to, term: p.term, meta: p.meta };
    if (p.seq !== undefined) m.seq = p.seq;
    this.deps.deliver(m);
    return { ok: true, term: this.deps.term() };
  }

  /** The snapshot `meta` names, if it was the last one assembled (taken once). */
  take(meta: SnapshotMeta): ReceivedSnapshot | undefined {
    const a = this.assembled;
    if (!a || a.meta.index !== meta.index || a.meta.term !== meta.term) return undefined;
    this.assembled = null;
    return a.received;
  }

  /** Drops a transfer under way (the node stops). */
  clear(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    this.drop();
  }

  /** Drops the transfer under way and an assembled snapshot nobody took: their files are removed. */
  private drop(): void {
    this.dropPartial();
    const a = this.assembled;
    this.assembled = null;
    if (a && 'sink' in a.received) void a.received.sink.abort().catch(() => undefined);
  }

  private dropPartial(): void {
    const p = this.partial;
    this.partial = null;
    void p?.sink?.abort().catch(() => undefined);
  }
}
