// Large files this process is writing: a snapshot (taken here or arriving from the leader), a
// restore's staged state, a save's spool (issue #34). While one is being written, and for a few
// seconds after its last piece or sync, the write-ahead log writes through libuv's pool and never
// on the event loop (wal/inline-writes.ts). The log's record is a synced write, and a synced write
// waits behind the disk's queue: with hundreds of MiB of writeback in flight the block layer's
// writeback throttling (wbt_wait) held a restore's entry ~280 ms on every server at once, each event
// loop asleep in writevSync (perf sched stacks, docs/benchmarks/history.md "A synced write behind a
// gigabyte"). Counted per process, not per disk: the files a server writes in bulk are on its own
// data dir. Noted per piece rather than begun and ended, so a writer dropped halfway (a failed
// transfer) cannot leave the log on the pool for good.
import { monotonicMs } from '../monotonic-clock';

/** After the last piece or sync: what it left dirty the kernel may still be writing back. */
const SETTLE_MS = 5_000;

let syncs = 0;
let until = 0;

/** A piece of a large file was just written (or is about to be). */
export function noteBulkWrite(): void {
  until = Math.max(until, monotonicMs() + SETTLE_MS);
}

/** Runs `sync` (a large file's fsync, which may take seconds) counted as a bulk write throughout. */
export async function duringBulkSync<T>(sync: () => Promise<T>): Promise<T> {
  syncs++;
  try {
    return await sync();
  } finally {
    syncs--;
    noteBulkWrite();
  }
}

/** Whether a large file is being written here: a sync under way, or a piece or sync less than SETTLE_MS ago. */
export function bulkWriting(): boolean {
  return syncs > 0 || monotonicMs() < until;
}
