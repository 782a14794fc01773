// Has the kernel map a new restore arena's pages on a thread of its own, before libuv's pool reads
// the snapshot into it (issue #34).
//
// Left to the read, each page is mapped inside the kernel's copy from the page cache, and a fault
// taken in the kernel holds the process's memory-map lock (mmap_lock) for reading all through it:
// only a fault taken in user mode can lock just the one mapping (per-VMA locks, Linux 6.4+). A
// transparent huge page (the arenas are madvised so: glibc.malloc.hugetlb=1) is 2 MiB zeroed under
// that lock, with points where a busy host takes the core away in the middle. Meanwhile every mmap,
// mprotect and munmap V8 makes — a page for what a scavenge promotes, a semi-space grown — waits for
// the lock: while three servers loaded a restore on two cores, scavenges of 50-100 ms with 5 ms of
// them on the CPU, the main thread asleep in mmap (perf sched_switch stacks; docs/benchmarks/history.md
// "The restore's page faults"). Touched from user mode the faults take no mmap_lock, and the read then
// copies into pages that exist. Not on the event loop: zeroing fresh memory on a VM cost ~13 ms per
// huge page there, and a restore at 1 GiB maps 512 of them.
import { Worker } from 'node:worker_threads';

/** A worker left without work this long is stopped: it holds an isolate's memory (~10 MiB). */
const IDLE_MS = 5_000;
/** The unit the kernel maps on a first touch (a huge page is 512 of them, mapped by the first). */
const PAGE_BYTES = 4096;

// The worker's whole program. A write, not a read: reading a fresh page only maps the shared zero
// page. The buffer need not start on a page, so its last byte is touched as well.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, buffer }) => {
  const bytes = new Uint8Array(buffer);
  for (let at = 0; at < bytes.length; at += ${PAGE_BYTES}) bytes[at] = 0;
  if (bytes.length > 0) bytes[bytes.length - 1] = 0;
  parentPort.postMessage(id);
});
`;

/** A running worker and the requests it has not answered yet. */
interface Running {
  worker: Worker;
  pending: Map<number, () => void>;
}

class PageMapper {
  private current: Running | undefined;
  private nextId = 0;
  private idle: NodeJS.Timeout | undefined;
  /** Set when a worker could not be started or failed: from then on the reads map their own pages, as before. */
  private broken = false;

  /**
   * Resolves once every page of `buffer` is mapped (its bytes are zero, as a new buffer's are). Never
   * rejects: without a worker the pages are left for whoever writes them first.
   */
  map(buffer: SharedArrayBuffer): Promise<void> {
    if (this.broken || buffer.byteLength === 0) return Promise.resolve();
    const running = this.current ?? this.start();
    if (!running) return Promise.resolve();
    clearTimeout(this.idle);
    const id = this.nextId++;
    return new Promise<void>((resolve) => {
      running.pending.set(id, resolve);
      running.worker.postMessage({ id, buffer });
    });
  }

  /** Whether a worker is running (tests). */
  get running(): boolean {
    return this.current !== undefined;
  }

  private start(): Running | undefined {
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 } });
    } catch {
      this.broken = true;
      return undefined;
    }
    // Never what keeps a process alive: a restore waiting on it is.
    worker.unref();
    const running: Running = { worker, pending: new Map() };
    worker.on('message', (id: number) => this.done(running, id));
    worker.on('error', () => this.lost(running, true));
    worker.on('exit', () => this.lost(running, false));
    this.current = running;
    return running;
  }

  private done(running: Running, id: number): void {
    running.pending.get(id)?.();
    running.pending.delete(id);
    if (running.pending.size > 0 || this.current !== running) return;
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.stop(running), IDLE_MS);
    this.idle.unref();
  }

  private stop(running: Running): void {
    if (this.current !== running || running.pending.size > 0) return;
    this.current = undefined;
    void running.worker.terminate();
  }

  /** A worker ended (stopped when idle, or failed): what it had not done is left to the reads. */
  private lost(running: Running, failed: boolean): void {
    if (this.current === running) this.current = undefined;
    if (failed) this.broken = true;
    for (const resolve of running.pending.values()) resolve();
    running.pending.clear();
  }
}

const mapper = new PageMapper();

/** Maps every page of `buffer` off the event loop (see above); resolves when done, never rejects. */
export function mapPages(buffer: SharedArrayBuffer): Promise<void> {
  return mapper.map(buffer);
}

/** Whether the page-mapping worker is running (it stops after IDLE_MS without work). */
export function pageMapperRunning(): boolean {
  return mapper.running;
}
