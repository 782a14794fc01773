// Sending what the core says to the other servers (the sending half of hashicorp/raft's
// replication.go): every server's address, as configurations and incoming messages tell them; a
// snapshot sent in pieces (snapshot-transfer.ts); and messages held back until the proposers'
// answers are written (answer-first: raft-node.ts handleReady) — always sent before any later one.
import type { Configuration, Message, NodeId } from '../core/types';
import type { SnapshotReader, Transport } from '../interfaces';
import { isUnspecifiedHost, splitHostPort } from '../transport/sender-address';
import type { RaftLogger } from './options';
import { SnapshotSender } from './snapshot-transfer';

export interface PeerSenderDeps {
  id: NodeId;
  transport: Transport;
  logger: RaftLogger;
  /** Largest snapshot piece sent. */
  pieceBytes: number;
  /** The latest stored snapshot, a piece at a time (snapshots.ts openStored). */
  openSnapshot(): Promise<SnapshotReader | undefined>;
  /** Whether this server still leads in `term` (a snapshot transfer stops as soon as it does not). */
  leading(term: number): boolean;
  /** The highest index follower `id` has acknowledged to this leader. */
  matched(id: NodeId): number;
  stopped(): boolean;
}

export class PeerSender {
  /** Every server ever seen in a configuration: messages to a just-removed server still go out. */
  private readonly addresses = new Map<NodeId, string>();
  /** The servers of `addresses` that were in a configuration (not only heard from). */
  private readonly members = new Set<NodeId>();
  /** Messages held back until the proposers' answers are written (defer()). */
  private deferred: Message[] = [];
  private readonly snapshots: SnapshotSender;

  constructor(private readonly deps: PeerSenderDeps) {
    this.snapshots = new SnapshotSender({
      id: deps.id,
      transport: deps.transport,
      logger: deps.logger,
      pieceBytes: deps.pieceBytes,
      open: () => deps.openSnapshot(),
      leading: (term) => deps.leading(term),
      matched: (id) => deps.matched(id),
    });
  }

  /** The address server `id` is reached at, if known. */
  address(id: NodeId): string | undefined {
    return this.addresses.get(id);
  }

  learn(configuration: Configuration): void {
    for (const s of configuration.servers) {
      if (!s.address) continue;
      this.addresses.set(s.id, s.address);
      this.members.add(s.id);
    }
  }

  /** Every server seen in a configuration since this node started, at its last address. */
  everMembers(): { id: NodeId; address: string }[] {
    return [...this.members].map((id) => ({ id, address: this.addresses.get(id)! }));
  }

  /**
   * A message came from `from` at `fromAddress`: a server added to a cluster hears from the leader
   * before it knows the configuration. A wildcard address is never recorded: dialling it reaches
   * this server itself (issue #25).
   */
  heardFrom(from: NodeId, fromAddress: string | undefined): void {
    if (fromAddress && !this.addresses.has(from) && !isUnspecifiedHost(splitHostPort(fromAddress)?.host ?? fromAddress)) {
      this.addresses.set(from, fromAddress);
    }
  }

  /** Writes out now what was sent so far (the transport batches a turn's messages otherwise). */
  flush(): void {
    this.deps.transport.flush?.();
  }

  send(m: Message): void {
    // Messages held back by an earlier Ready go first: a follower must see them in order.
    if (this.deferred.length > 0) this.flushDeferred();
    const address = this.addresses.get(m.to);
    if (!address) {
      this.deps.logger.debug({ to: m.to, type: m.type }, 'raft: no address for recipient');
      return;
    }
    if (m.type === 'snapshot') {
      // The core names a snapshot; the bytes (and the meta they belong to) are the latest stored,
      // sent in pieces (snapshot-transfer.ts).
      this.snapshots.send({ id: m.to, address }, m);
      return;
    }
    this.deps.transport.send({ id: m.to, address }, m);
  }

  /**
   * Sends `messages` on the next tick: the proposers' answers, written by promise chains that the
   * apply after this resolves, are queued for the socket before them (the tick queue runs once the
   * microtasks are done).
   */
  defer(messages: Message[]): void {
    if (messages.length === 0) return;
    const first = this.deferred.length === 0;
    this.deferred.push(...messages);
    if (first) process.nextTick(() => this.flushDeferred());
  }

  /** The node stops: snapshot transfers stop at their next piece. */
  stop(): void {
    this.snapshots.cancelAll();
  }

  private flushDeferred(): void {
    const held = this.deferred;
    if (held.length === 0) return;
    this.deferred = [];
    if (this.deps.stopped()) return;
    for (const m of held) this.send(m);
  }
}
