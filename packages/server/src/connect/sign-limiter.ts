import { monotonicMs } from '../time';
// Leaf signing admission on the leader (Consul's CSRMaxPerSecond / CSRMaxConcurrent): a token bucket
// refilled at `perSecond` (burst of one second's worth) and a cap on signings in flight. A request
// that does not fit is refused at once with `rate limited` (HTTP 429), never queued: the agent retries.

export const RATE_LIMITED = 'rate limited';

export interface SignLimits {
  /** Signings per second; 0 disables the rate limit. */
  perSecond: number;
  /** Signings in flight; 0 disables the cap. */
  maxConcurrent: number;
}

export class SignLimiter {
  private tokens: number;
  private last: number;
  private inFlight = 0;

  constructor(
    private readonly limits: SignLimits,
    private readonly now: () => number = monotonicMs,
  ) {
    this.tokens = Math.max(1, limits.perSecond);
    this.last = now();
  }

  /** Take a slot; false when either limit is reached. A true answer must be followed by release(). */
  tryAcquire(): boolean {
    if (this.limits.maxConcurrent > 0 && this.inFlight >= this.limits.maxConcurrent) return false;
    if (this.limits.perSecond > 0) {
      const t = this.now();
      const burst = Math.max(1, this.limits.perSecond);
      this.tokens = Math.min(burst, this.tokens + ((t - this.last) / 1000) * this.limits.perSecond);
      this.last = t;
      if (this.tokens < 1) return false;
      this.tokens -= 1;
    }
    this.inFlight++;
    return true;
  }

  release(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }
}
