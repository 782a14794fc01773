// What arrives from the other servers before the core steps it (the receiving half of hashicorp/
// raft's transport consumer): a message from outside the configuration is dropped (stranger-
// filter.ts), and a snapshot sent in pieces is assembled (snapshot-transfer.ts) — straight into a
// snapshot file when the storage streams — and handed to the Ready that installs it.
import type { Message, NodeId, Ready, SnapshotMeta } from '../core/types';
import type { Install } from './fsm-apply';
import type { ResolvedOptions } from './options';
import { INSTALL_SNAPSHOT, SnapshotReceiver, type SnapshotMessage } from './snapshot-transfer';
import { strangerDrop } from './stranger-filter';

export interface InboundDeps {
  opts: ResolvedOptions;
  term(): number;
  /** The configuration's members (empty: none yet). */
  members(): ReadonlyArray<{ id: NodeId }>;
  leading(): boolean;
  /** The leader this server follows now, if any. */
  leader(): NodeId | null;
  /** Milliseconds since a leader was last heard from (Infinity: never). */
  sinceLeaderContactMs(): number;
  /** False while the node cannot take part in Raft (stopped, storage fault). */
  accepting(): boolean;
  /** Steps the core with an assembled snapshot message. */
  deliver(m: SnapshotMessage): void;
}

export class Inbound {
  private readonly receiver: SnapshotReceiver;

  constructor(private readonly deps: InboundDeps) {
    const { opts } = deps;
    this.receiver = new SnapshotReceiver({
      term: deps.term,
      accepting: deps.accepting,
      deliver: deps.deliver,
      refuses: (from, term) => this.refused({ type: 'snapshot', from, to: opts.id, term, meta: { index: 0, term: 0, configuration: { servers: [] } } }),
      // Pieces go straight into a snapshot file when the storage streams and reads back (issue #34).
      ...(opts.storage.createSnapshot && opts.storage.readSnapshot ? { createSink: (meta: SnapshotMeta) => opts.storage.createSnapshot!(meta, Infinity) } : {}),
      logger: opts.logger,
    });
    opts.transport.handle(INSTALL_SNAPSHOT, (body) => this.receiver.receive(body));
  }

  /** Why `message` is dropped (a stranger's: stranger-filter.ts, told to the observer), or null. */
  refused(message: Message): string | null {
    const why = strangerDrop(message, {
      members: this.deps.members(),
      self: this.deps.opts.id,
      leader: this.deps.leader(),
      leading: this.deps.leading(),
      sinceLeaderContactMs: this.deps.sinceLeaderContactMs(),
      electionTimeoutMs: this.deps.opts.tickMs * this.deps.opts.electionTicks,
    });
    if (why) this.deps.opts.observer.strangerDropped?.(message.from, message.type, why);
    return why;
  }

  /** The snapshot a Ready installs: pieces assembled here (or their file), or whole from an older leader. */
  install(snapshot: NonNullable<Ready['snapshot']>): Install {
    const received = this.receiver.take(snapshot.meta);
    if (!received) {
      // Its pieces are gone: saving anything in their place would store an empty snapshot and drop
      // the whole log with it. Nothing of this Ready is written; the node stops (drive()) and,
      // restarted from its disk, is sent the snapshot again.
      if (snapshot.data === undefined) throw new Error(`raft: the snapshot at ${snapshot.meta.index} (term ${snapshot.meta.term}) the core installs has no pieces; refusing to store it`);
      return { meta: snapshot.meta, data: snapshot.data };
    }
    return { meta: snapshot.meta, ...('sink' in received ? { sink: received.sink } : { data: received.pieces }) };
  }

  /** Snapshots assembled from pieces at or below what is applied will never be installed: let go. */
  settled(applied: number): void {
    this.receiver.settled(applied);
  }

  /** The node stops: a transfer under way is dropped. */
  stop(): void {
    this.receiver.clear();
  }
}
