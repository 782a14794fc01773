// Which records the log writes on the event loop itself and which through libuv's pool (issue #30).
//
// A record goes to the disk as one positioned write into a segment opened O_DSYNC (segments.ts):
// 0.3–0.7 ms on this machine's disk. Through the pool that write is two hand-offs more — a pool
// thread woken to do it, the event loop woken by the thread when it is done — and on a busy host
// each hand-off can wait for a core. At one client those waits were most of a write's p99 (4.2 ms
// against 3.3 ms written inline; three alternating pairs, docs/benchmarks.md). So a small record is
// written inline: the loop is held for the write's own time, which is less than the hand-offs cost.
//
// A large record is written through the pool: it comes from a batch of many writers, so the server
// is busy and has requests to parse while the disk works (written inline, 64 clients lost 7 % of
// their throughput). So is a small record that follows a large one: a busy server writes the odd
// small record too (a compaction point, a batch that happened to be short), and at 256 clients
// writing those inline made the p99.9 of a write 250–570 ms against 120–150 (p99 up to 275 ms
// against 45–55). No loop stall of 50 ms or more showed on any server while it happened, so how is
// not known yet; what is measured is that inline writes only while the load is light (the previous
// record small as well) leave the 256-client tail where the pool has it. And a disk that turns slow
// moves every write to the pool for a while: an inline write that took longer than `slowMs` means
// the loop could not serve anything else meanwhile, and the next writes might take as long. Only
// that first slow write holds the loop. And while this process writes a large file (a snapshot, a
// restore's staged state: bulk-writes.ts) every record goes through the pool: the disk is known to be
// busy, and a synced write then waits behind its queue (~280 ms on every server at once in a restore).
import { monotonicMs } from '../../monotonic-clock';
import { bulkWriting } from '../bulk-writes';

export interface InlineWriteLimits {
  /** Largest record written inline, in bytes (0: every record through the pool). */
  maxBytes: number;
  /** A write slower than this (ms) sends the next ones through the pool… */
  slowMs: number;
  /** …for this long (ms). */
  poolForMs: number;
}

export const DEFAULT_INLINE_WRITES: InlineWriteLimits = { maxBytes: 8 * 1024, slowMs: 20, poolForMs: 10_000 };

export class InlineWrites {
  private poolUntil = 0;
  /** The size of the record written last (0 before the first). */
  private lastBytes = 0;

  constructor(private readonly limits: InlineWriteLimits = DEFAULT_INLINE_WRITES) {}

  /** Whether a record of `bytes` is written on the event loop now. */
  inline(bytes: number): boolean {
    return bytes <= this.limits.maxBytes && this.lastBytes <= this.limits.maxBytes && monotonicMs() >= this.poolUntil && !bulkWriting();
  }

  /** A record of `bytes` was written, by either way, in `ms`. */
  took(ms: number, bytes: number): void {
    this.lastBytes = bytes;
    if (ms > this.limits.slowMs) this.poolUntil = monotonicMs() + this.limits.poolForMs;
  }
}
