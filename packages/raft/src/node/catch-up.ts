// A server that starts with no Raft state at all cannot tell a brand-new server from a member whose
// data dir was lost (issue #16). The second may have acknowledged entries that were committed with
// its help, and voted in terms it no longer remembers: if it voted now, a candidate missing a
// committed entry could win with its vote. So every such server stays out of elections (no votes,
// no campaigns — RaftCore.setElectionsAllowed) until it has caught up: it asks the leader for a
// read index (ReadIndex, Raft thesis §6.4) and waits until it has applied that index, which covers
// every entry committed before it asked. A new cluster's servers are let in by bootstrap() at once
// (their first configuration is written by themselves: nobody can have voted before).
import type { RaftLogger } from './options';
import { monotonicMs } from '../monotonic-clock';

export interface CatchUpHost {
  /** The leader this server follows, or null; never itself (a catching-up server cannot lead). */
  followedLeader(): string | null;
  readBarrier(timeoutMs: number): Promise<void>;
  appliedIndex(): number;
  setElectionsAllowed(allowed: boolean): void;
  /** Told once, when the server has caught up. */
  caughtUp(info: CaughtUp): void;
}

export interface CaughtUp {
  appliedIndex: number;
  /** From the start of the node to the moment it caught up. */
  ms: number;
}

/** Long enough for a large snapshot to be sent, written and restored behind the read index. */
const BARRIER_TIMEOUT_MS = 120_000;
/** After a failed attempt (no leader yet, a leader change), the next one waits this long. */
const RETRY_MS = 250;

export class CatchUpGate {
  private readonly since = monotonicMs();
  private attempting = false;
  private retryAt = 0;
  private done = false;
  private announcedLeader: string | null = null;

  constructor(
    private readonly host: CatchUpHost,
    private readonly logger: RaftLogger,
  ) {
    host.setElectionsAllowed(false);
  }

  /**
   * Said once, at the first tick still waiting: a server that bootstraps (a new cluster, -dev)
   * leaves the gate synchronously as it starts (bootstrapped()), before any tick, and says nothing;
   * a server joining a cluster learns it is waiting — normal for a new one, so info, not a warning.
   */
  private noticed = false;
  private notice(): void {
    if (this.noticed) return;
    this.noticed = true;
    this.logger.info(
      {},
      'raft: no Raft state on disk; this server neither votes nor stands for election until it has caught up with a leader ' +
        '(a new server, or a member whose data dir was lost: see docs/raft.md)',
    );
  }

  get pending(): boolean {
    return !this.done;
  }

  /** The state was written by bootstrap(): a new cluster, in elections from the start. */
  bootstrapped(): void {
    if (this.done) return;
    this.done = true;
    this.host.setElectionsAllowed(true);
  }

  /** Called on every tick: starts an attempt once a leader is known. */
  poll(): void {
    if (this.done) return;
    this.notice();
    if (this.attempting || monotonicMs() < this.retryAt) return;
    const leader = this.host.followedLeader();
    if (leader === null) return;
    if (leader !== this.announcedLeader) {
      this.announcedLeader = leader;
      this.logger.info({ leader }, 'raft: catching up with the leader before taking part in elections');
    }
    this.attempting = true;
    this.host.readBarrier(BARRIER_TIMEOUT_MS).then(
      () => {
        this.attempting = false;
        if (this.done) return;
        this.done = true;
        this.host.setElectionsAllowed(true);
        const info = { appliedIndex: this.host.appliedIndex(), ms: monotonicMs() - this.since };
        this.logger.info(info, 'raft: caught up with the leader; taking part in elections again');
        this.host.caughtUp(info);
      },
      (err: Error) => {
        this.attempting = false;
        this.retryAt = monotonicMs() + RETRY_MS;
        this.logger.debug({ err: err.message }, 'raft: catching up: read index failed; trying again');
      },
    );
  }
}
