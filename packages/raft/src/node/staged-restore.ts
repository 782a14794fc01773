// Restoring a snapshot from the leader while its pieces are still arriving (issue #34). A wiped
// follower used to receive the whole snapshot into a file, then read the file back and decode it:
// two passes one after the other (at 512 MiB, 4 s then 5 s). Here each piece, once written into the
// snapshot file, is also handed to the state machine's stageFrom(), which decodes it into a new state
// beside the current one; when the core installs the snapshot the driver only swaps that state in
// (StagedRestore.commit). Nothing is visible before then: a transfer dropped midway fails the feed,
// the decode stops, and the staged state is let go.
//
// The feed holds a piece only until the decoder has taken it. If the decoder falls behind, the
// receiver waits (room()) before it answers the next piece, so the leader's pieces in flight
// (PIECES_IN_FLIGHT) are the bound on what waits here.
import type { SnapshotMeta } from '../core/types';
import type { SnapshotSource, StagedRestore, StateMachine } from '../interfaces';
import { monotonicMs } from '../monotonic-clock';
import type { RaftLogger } from './options';

/** Pieces the feed holds for a decoder that lags before the receiver stops answering. */
const MAX_WAITING_PIECES = 16;

/** A snapshot's pieces as they arrive, read once each in order by the decoder. */
export class PieceFeed implements SnapshotSource {
  private readonly waiting: Uint8Array[] = [];
  /** Index of waiting[0]. */
  private taken = 0;
  private pushed = 0;
  private ended = false;
  private failure: Error | null = null;
  private reader: { i: number; resolve(piece: Uint8Array): void; reject(err: Error): void } | null = null;
  private roomWaiters: (() => void)[] = [];

  /** Unknown (Infinity) until the last piece is in: the decoder asks for the next one until then. */
  get chunks(): number {
    return this.ended ? this.pushed : Infinity;
  }

  /** The next piece; `last` ends the feed with it (before the decoder sees it, so that it finds the end). */
  push(piece: Uint8Array, last = false): void {
    if (this.ended || this.failure) return;
    if (piece.length === 0) {
      if (last) this.end();
      return;
    }
    this.pushed++;
    if (last) this.ended = true;
    const r = this.reader;
    if (r && r.i === this.pushed - 1) {
      this.reader = null;
      this.taken++;
      r.resolve(piece);
    } else {
      this.waiting.push(piece);
    }
  }

  /** The last piece is in. */
  end(): void {
    this.ended = true;
    const r = this.reader;
    if (r && r.i >= this.pushed) {
      this.reader = null;
      r.reject(new Error('the snapshot ended before its state did'));
    }
  }

  /** The transfer was dropped: the decoder stops at its next read, and nothing is held any more. */
  fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.waiting.length = 0;
    const r = this.reader;
    this.reader = null;
    r?.reject(err);
    this.wake();
  }

  read(i: number): Promise<Uint8Array> {
    if (this.failure) return Promise.reject(this.failure);
    if (i !== this.taken) return Promise.reject(new Error(`snapshot piece ${i} read out of order (next is ${this.taken})`));
    const piece = this.waiting.shift();
    if (piece) {
      this.taken++;
      if (this.waiting.length < MAX_WAITING_PIECES) this.wake();
      return Promise.resolve(piece);
    }
    if (this.ended) return Promise.reject(new Error('the snapshot ended before its state did'));
    return new Promise((resolve, reject) => (this.reader = { i, resolve, reject }));
  }

  /** Resolves once the decoder has caught up enough for the receiver to take another piece. */
  room(): Promise<void> {
    if (this.waiting.length < MAX_WAITING_PIECES || this.failure) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  private wake(): void {
    const w = this.roomWaiters;
    this.roomWaiters = [];
    for (const f of w) f();
  }
}

/** A restore being staged from a transfer's pieces: the feed, and the state machine's result. */
export interface Staging {
  feed: PieceFeed;
  /** Resolves to the staged state once every piece is decoded; rejects if the bytes are not a state or the feed failed. */
  result: Promise<StagedRestore>;
}

/** Starts staging a snapshot from its pieces, if the state machine can (stageFrom); else null. */
export function startStaging(fsm: StateMachine, meta: SnapshotMeta): Staging | null {
  if (!fsm.stageFrom) return null;
  const feed = new PieceFeed();
  const result = fsm.stageFrom(feed, meta);
  // Awaited by the install (or never, when the transfer is dropped): not an unhandled rejection.
  result.catch(() => undefined);
  return { feed, result };
}

/**
 * The staged state of an installed snapshot, once decoded; null when staging failed (the driver
 * then restores from the stored snapshot as it would without staging, and fails the same way if
 * the bytes are bad).
 */
export async function stagedRestore(opts: { logger: RaftLogger; id: string }, meta: SnapshotMeta, staged: Promise<StagedRestore>): Promise<StagedRestore | null> {
  const started = monotonicMs();
  try {
    const result = await staged;
    opts.logger.info({ id: opts.id, index: meta.index, waitedMs: Math.round(monotonicMs() - started) }, 'raft: restored the installed snapshot while it arrived');
    return result;
  } catch (err) {
    opts.logger.warn({ id: opts.id, index: meta.index, err: err instanceof Error ? err.message : String(err) }, 'raft: decoding the snapshot as it arrived failed; restoring it from storage');
    return null;
  }
}
