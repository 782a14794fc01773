// The time a leader stamps on the entries it proposes, which ages the dedup window out
// (store requests/request-table.ts) identically on every server. It is a clock of the log, not of
// any server: each leader continues from the latest stamp in the log it has applied and advances
// it by its own monotonic clock (issue 36, finding 1: stamped with the leader's Date.now(), a
// leader whose wall clock ran ten minutes ahead emptied the window at its first write, and re-sent
// writes then applied twice). Its wall clock is read once, when the log holds no stamp yet, so
// that the log's time starts near the wall time as the stamps of older versions did.
//
// While no leader is in office the clock stands still (a new leader continues from the last
// stamp), so the log's time runs, if anything, slow: the window keeps ids longer, never shorter.
import { monotonicMs } from '../time';

export class LogClock {
  private term = -1;
  /** A log time and the monotonic time it was taken at; stamps advance from there. */
  private base = 0;
  private baseAt = 0;

  constructor(
    /** The latest stamp this server has applied (0 when its log and snapshot hold none). */
    private readonly latestInLog: () => number,
    private readonly now: () => number = monotonicMs,
    private readonly wall: () => number = Date.now,
  ) {}

  /** The stamp for an entry proposed now in `term` by this server, as leader. */
  stamp(term: number): number {
    const now = this.now();
    const inLog = this.latestInLog();
    if (term !== this.term) {
      // A new term: continue from the log as the predecessors left it, not from this server's
      // own earlier time in office.
      this.term = term;
      this.base = inLog > 0 ? inLog : this.wall();
      this.baseAt = now;
    }
    const at = this.base + (now - this.baseAt);
    if (at >= inLog) return at;
    // Entries this leader had not applied yet when its term began carried later stamps.
    this.base = inLog;
    this.baseAt = now;
    return inLog;
  }
}
