// Work only the leader does (Consul's leader loop): keeping servers' catalog entries, session TTL
// timers, creating the initial management token, initialising the CA… Each duty starts when this
// server becomes a ready leader (its no-op committed) and stops when it loses leadership, so a new
// leader always starts from the replicated state, never from a predecessor's timers.
import type { RaftNode } from '@registry/raft';
import type { Logger } from './logger';

export interface LeaderDuty {
  readonly name: string;
  /** Called once per term of leadership, after the leader's no-op has committed. */
  start(): void | Promise<void>;
  /** Called when leadership is lost or the agent stops; must cancel timers. */
  stop(): void;
}

export class LeaderDuties {
  private readonly duties: LeaderDuty[] = [];
  private active = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly raft: RaftNode,
    private readonly logger: Logger,
  ) {}

  add(duty: LeaderDuty): void {
    this.duties.push(duty);
    if (this.active) void this.startOne(duty);
  }

  /** Poll leadership: cheap, and robust to missed events (readiness has no event of its own). */
  start(pollMs = 50): void {
    const check = () => {
      const leading = this.raft.leaderReady();
      if (leading && !this.active) {
        this.active = true;
        this.logger.info({ term: this.raft.term() }, 'leadership established: starting leader duties');
        for (const d of this.duties) void this.startOne(d);
      } else if (!leading && this.active) {
        this.active = false;
        this.logger.info('leadership lost: stopping leader duties');
        this.stopAll();
      }
      this.timer = setTimeout(check, pollMs);
    };
    check();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.active) this.stopAll();
    this.active = false;
  }

  private async startOne(d: LeaderDuty): Promise<void> {
    try {
      await d.start();
    } catch (err) {
      this.logger.warn({ duty: d.name, err: (err as Error).message }, 'leader duty failed to start');
    }
  }

  private stopAll(): void {
    for (const d of this.duties) {
      try {
        d.stop();
      } catch (err) {
        this.logger.warn({ duty: d.name, err: (err as Error).message }, 'leader duty failed to stop');
      }
    }
  }
}
