// Followers' `default` reads ask the leader for its commit index rather than forwarding the whole
// query (issue #14). Many reads arrive at once, so the question is batched as etcd batches ReadIndex:
// the reads that arrive in one event-loop turn share one call, sent at the end of that turn, and a
// call's answer serves only reads that arrived before it was sent — a read arriving while a call is
// in flight waits for a later call, since an answer to a call sent before the read arrived might
// predate a write acknowledged just before the read, which the read would then miss.
//
// Calls are pipelined, up to MAX_IN_FLIGHT at once: a read waits about one round trip to the leader
// rather than one and a half (the rest of the call in flight, then its own), and a busy follower
// still sends at most a few calls per round trip however many reads it serves.

/** Calls to the leader in flight at once; further batches wait for one to finish. */
const MAX_IN_FLIGHT = 4;

interface Waiter {
  resolve(index: number): void;
  reject(err: Error): void;
}

export class CommitIndexBatcher {
  private waiting: Waiter[] = [];
  private inFlight = 0;
  private scheduled = false;
  /** Calls sent and reads they answered, for docs/benchmarks.md and tests of the batching. */
  readonly counts = { calls: 0, reads: 0 };

  /** `ask` asks the leader once; it must settle (its own timeout bounds it). */
  constructor(
    private readonly ask: () => Promise<number>,
    private readonly maxInFlight = MAX_IN_FLIGHT,
  ) {}

  /** The leader's commit index, from a call sent after this was called. */
  fetch(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.schedule();
    });
  }

  /** A send at the end of this event-loop turn, so that every read parsed in the turn rides on it. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.send();
    });
  }

  private send(): void {
    if (this.waiting.length === 0 || this.inFlight >= this.maxInFlight) return;
    const batch = this.waiting;
    this.waiting = [];
    this.inFlight++;
    this.counts.calls++;
    this.counts.reads += batch.length;
    let asked: Promise<number>;
    try {
      asked = this.ask();
    } catch (err) {
      asked = Promise.reject(err);
    }
    const done = () => {
      this.inFlight--;
      if (this.waiting.length > 0) this.schedule();
    };
    asked.then(
      (index) => {
        done();
        for (const w of batch) w.resolve(index);
      },
      (err: unknown) => {
        done();
        const e = err instanceof Error ? err : new Error(String(err));
        for (const w of batch) w.reject(e);
      },
    );
  }
}
