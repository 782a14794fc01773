// How far each server's wall clock is from the leader's (issue #36). Nothing in Raft, the dedup
// window, lock-delays, TTLs or timeouts reads a wall clock any more, so a wrong clock changes only
// the timestamps a server prints and the validity of leaf certificates its CA signs as leader. That
// is still worth knowing: the leader's one-second `cluster.info` ping carries each server's
// Date.now(), compared here with the leader's own at the middle of the round trip (accurate to half
// of it). Beyond the bound a warning is logged (at most once a minute per server) and the offset is
// always exported as `registry_server_clock_offset_seconds{node}`.
import type { Logger } from '../runtime/logger';

/** A server whose clock is off by more than this from the leader's is reported. */
export const CLOCK_OFFSET_WARN_MS = 1_000;
const WARN_EVERY_MS = 60_000;

export interface ClockOffset {
  node: string;
  address: string;
  /** Its wall clock minus the leader's, in ms (positive: ahead). */
  ms: number;
}

export class ClockOffsets {
  private readonly offsets = new Map<string, ClockOffset & { warnedAt: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /**
   * One ping: `sentWall`/`answeredWall` are the leader's Date.now() around the call, `theirWall`
   * the server's; `monoNow` the leader's monotonic clock, for rate-limiting the warning.
   */
  observe(id: string, node: string, address: string, sentWall: number, answeredWall: number, theirWall: number): void {
    const rtt = answeredWall - sentWall;
    // A wall step on the leader during the call makes the sample meaningless: skip it.
    if (rtt < 0 || rtt > 5_000) return;
    const ms = theirWall - (sentWall + answeredWall) / 2;
    const prev = this.offsets.get(id);
    const entry = { node, address, ms, warnedAt: prev?.warnedAt ?? -Infinity };
    this.offsets.set(id, entry);
    if (Math.abs(ms) - rtt / 2 > CLOCK_OFFSET_WARN_MS && this.now() - entry.warnedAt >= WARN_EVERY_MS) {
      entry.warnedAt = this.now();
      this.logger.warn(
        { node, address, offsetMs: Math.round(ms), boundMs: CLOCK_OFFSET_WARN_MS },
        `server ${node}'s wall clock is ${Math.round(Math.abs(ms))} ms ${ms > 0 ? 'ahead of' : 'behind'} the leader's: only timestamps and certificate validity follow wall clocks; check its NTP`,
      );
    }
  }

  /** Forget servers no longer in the configuration (and everything when leadership is lost). */
  retain(ids: ReadonlySet<string>): void {
    for (const id of this.offsets.keys()) if (!ids.has(id)) this.offsets.delete(id);
  }

  list(): ClockOffset[] {
    return [...this.offsets.values()].map(({ node, address, ms }) => ({ node, address, ms }));
  }
}
