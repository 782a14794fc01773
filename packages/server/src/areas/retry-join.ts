// RetryJoin (spec "Network areas"): the leader keeps joining each area that has RetryJoin addresses
// and no known peer server yet, backing off per area, until a join succeeds.
import type { Store } from '@registry/store';
import type { LeaderDuty } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';
import { joinArea } from './area-join';
import type { WanLinks } from './wan-links';
import { monotonicMs } from '../time';

const TICK_MS = 500;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

export class AreaRetryJoin implements LeaderDuty {
  readonly name = 'area-retry-join';
  private timer: NodeJS.Timeout | null = null;
  /** area ID → when to try next and the current backoff. */
  private readonly next = new Map<string, { at: number; backoffMs: number }>();
  private running = false;

  constructor(
    private readonly links: WanLinks,
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.stop();
    this.next.clear();
    const tick = async () => {
      await this.round();
      if (this.timer) this.timer = setTimeout(tick, TICK_MS);
    };
    this.timer = setTimeout(tick, 0);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One pass: attempt every due area that still has no known peer server. */
  async round(now = monotonicMs()): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const joined = new Set(this.store.areaServers().value.filter((a) => a.Servers.length > 0).map((a) => a.AreaID));
      for (const area of this.store.areaList().value) {
        if (!area.RetryJoin || area.RetryJoin.length === 0 || joined.has(area.ID)) continue;
        const due = this.next.get(area.ID);
        if (due && due.at > now) continue;
        const results = await joinArea(this.links, area, area.RetryJoin);
        if (results.some((r) => r.Joined)) {
          this.logger.info({ area: area.ID, peer: area.PeerDatacenter }, 'joined network area');
          this.next.delete(area.ID);
        } else {
          const backoffMs = Math.min(MAX_BACKOFF_MS, due ? due.backoffMs * 2 : FIRST_BACKOFF_MS);
          this.next.set(area.ID, { at: now + backoffMs, backoffMs });
          this.logger.debug({ area: area.ID, errors: results.map((r) => r.Error) }, 'area join failed; will retry');
        }
      }
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'area retry-join round failed');
    } finally {
      this.running = false;
    }
  }
}
