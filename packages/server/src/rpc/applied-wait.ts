// Waiting until this server has applied a given index (a follower's default read after it learnt
// the leader's commit index): one 'applied' listener serves every waiting read, however many.
import type { RaftNode } from '@registry/raft';

interface Waiter {
  index: number;
  done(ok: boolean): void;
}

export class AppliedWait {
  private waiters: Waiter[] = [];

  constructor(private readonly raft: RaftNode) {
    raft.on('applied', () => this.release());
  }

  /** True once applied ≥ index, false if `maxMs` passed first. */
  until(index: number, maxMs: number): Promise<boolean> {
    if (this.raft.appliedIndex() >= index) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        index,
        done: (ok) => {
          clearTimeout(timer);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, maxMs);
      this.waiters.push(waiter);
    });
  }

  private release(): void {
    if (this.waiters.length === 0) return;
    const applied = this.raft.appliedIndex();
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.index <= applied) w.done(true);
      else still.push(w);
    }
    this.waiters = still;
  }
}
