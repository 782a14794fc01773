// Group commit: proposals made during one event-loop turn wait here and are handed to the core
// together at the start of the driver's next turn, so that one Ready — one synced storage write
// (log-writer.ts), one append per follower — carries them all (hashicorp/raft batches its applyCh
// the same way, up to MaxAppendEntries). Their bytes are copied into one buffer per batch
// (entry-bytes.ts ownBytes): a proposal is often a view into a much larger buffer (msgpackr packs
// into a shared working buffer of up to hundreds of KB), and the log keeps its entries until a
// snapshot compacts them — at 100,000 catalog nodes the leader's log of 40 MiB held 170 MiB of such
// buffers alive (docs/benchmarks/history.md, *Large catalog*).
import { ownBytes } from '../entry-bytes';
import type { NodeMetrics } from './node-metrics';
import type { PendingProposals } from './pending-proposals';

interface QueuedProposal {
  data: Uint8Array;
  resolve(result: unknown): void;
  reject(err: Error): void;
}

export interface HandOver {
  /** Why nothing may be proposed now (a storage fault), or null. */
  refusal(): Error | null;
  /** The core's propose() when it leads, else null; null also while it refuses (a transfer). */
  propose(data: Uint8Array[]): { index: number; term: number }[] | null;
  /** The error a refused batch fails with. */
  notLeader(): Error;
  proposed: PendingProposals;
  metrics: NodeMetrics;
}

export class ProposalQueue {
  private queue: QueuedProposal[] = [];

  get length(): number {
    return this.queue.length;
  }

  /** Resolves with the state machine's result once the entry is applied here (pending-proposals.ts). */
  add(data: Uint8Array): Promise<unknown> {
    return new Promise((resolve, reject) => this.queue.push({ data, resolve, reject }));
  }

  /** Fails every queued proposal: none of them reached the log. */
  rejectAll(err: Error): void {
    const queued = this.queue;
    this.queue = [];
    for (const p of queued) p.reject(err);
  }

  /** Hands every queued proposal to the core as one batch; each then waits for its entry's apply. */
  handOver(to: HandOver): void {
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    const refused = to.refusal();
    if (refused) {
      for (const p of batch) p.reject(refused);
      return;
    }
    const positions = to.propose(ownBytes(batch));
    if (!positions) {
      const err = to.notLeader();
      for (const p of batch) p.reject(err);
      return;
    }
    positions.forEach((pos, i) => to.proposed.add(pos.index, pos.term, batch[i].resolve, batch[i].reject));
    if (positions.length > 0) to.metrics.proposed(positions[positions.length - 1].index, positions.length);
  }
}
