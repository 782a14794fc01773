// Which step the Ready in progress is at (raft-node.ts handleReady), so that one that does not
// finish says where it stands. While a Ready is in progress nothing the core says goes out: a
// follower stuck there still hears its leader's heartbeats (the core steps them), yet answers
// nothing, and its leader loses quorum with no line in either log (dead-server-cleanup in CI).
import { monotonicMs } from '../monotonic-clock';
import type { RaftLogger } from './options';

export type ReadyStep = 'persist' | 'restore' | 'apply';

/** A Ready still in progress after this long is reported, and again at this interval. */
const SLOW_MS = 5_000;

export class ReadyProgress {
  private step: ReadyStep | null = null;
  private since = 0;
  private started = 0;
  private reportedAt = 0;

  /** A Ready starts, or moves on to `step`. */
  at(step: ReadyStep): void {
    const now = monotonicMs();
    if (this.step === null) {
      this.started = now;
      this.reportedAt = 0;
    }
    this.step = step;
    this.since = now;
  }

  done(): void {
    this.step = null;
  }

  /** On every tick: a line when the Ready in progress has taken SLOW_MS (then every SLOW_MS). */
  check(logger: RaftLogger, id: string): void {
    // A snapshot being restored says how far it is itself (fsm-apply.ts restoreWithProgress).
    if (this.step === null || this.step === 'restore') return;
    const now = monotonicMs();
    if (now - this.started < SLOW_MS || now - this.reportedAt < SLOW_MS) return;
    this.reportedAt = now;
    logger.warn({ id, step: this.step, stepMs: Math.round(now - this.since), readyMs: Math.round(now - this.started) }, 'raft: a ready batch is still in progress; nothing this server says goes out until it is done');
  }
}
