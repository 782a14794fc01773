// The driver's clock (hashicorp/raft's heartbeat and election timers; in etcd-io/raft's shape a
// tick every tickMs that the core counts into its election and heartbeat timeouts), and the
// warning when the event loop ran late: a blocked loop looks like a dead leader to the others.
import { monotonicMs } from '../monotonic-clock';
import type { RaftLogger } from './options';

/** How long after start() a late tick is the agent's own start, not a stall worth a warning. */
const STARTUP_LAG_GRACE_MS = 5_000;

export class Ticker {
  private timer: NodeJS.Timeout | null = null;
  private nextTickAt = 0;
  private lastLagWarning = -Infinity;
  /**
   * No lag warning before this: the agent's own start (HTTP and DNS listeners, the UI's files, the
   * first listings) runs synchronously after Raft starts ticking and made a warning at every start,
   * before any peer could have been waiting on this server.
   */
  private lagQuietUntil = Infinity;

  constructor(
    private readonly tickMs: number,
    private readonly logger: RaftLogger,
    private readonly onTick: () => void,
  ) {}

  get running(): boolean {
    return this.timer !== null;
  }

  start(): void {
    if (this.timer) return;
    this.nextTickAt = monotonicMs() + this.tickMs;
    this.lagQuietUntil = monotonicMs() + STARTUP_LAG_GRACE_MS;
    this.timer = setInterval(() => this.fire(), this.tickMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private fire(): void {
    const now = monotonicMs();
    const late = now - this.nextTickAt;
    if (late > Math.max(100, this.tickMs * 2) && now - this.lastLagWarning > 1000 && now >= this.lagQuietUntil) {
      this.lastLagWarning = now;
      this.logger.warn({ lagMs: Math.round(late), tickMs: this.tickMs }, 'raft: event loop lag');
    }
    this.nextTickAt = now + this.tickMs;
    this.onTick();
  }
}
