// Waiting out a leaderless moment: every request that needs a leader (writes, default reads, leader
// calls) waits here, on one listener however many there are, until Raft announces a leader or the
// caller's step runs out.
import type { RaftNode } from '@registry/raft';

export class LeaderWait {
  private next: Promise<void> | null = null;

  constructor(private readonly raft: RaftNode) {}

  /** Resolves at the next 'leader' announcement, or after `maxMs` (at least 10 ms). */
  wait(maxMs: number): Promise<void> {
    if (!this.next) {
      this.next = new Promise((resolve) => {
        this.raft.once('leader', () => {
          this.next = null;
          resolve();
        });
      });
    }
    const next = this.next;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(10, maxMs));
      void next.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
