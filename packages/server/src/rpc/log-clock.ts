// The time a leader stamps on the entries it proposes, which ages the dedup window out
// (store requests/request-table.ts) identically on every server. It is a clock of the log, not of
// any server: each leader continues from the latest stamp in the log it has applied and advances
// it by its own monotonic clock (issue 36, finding 1: stamped with the leader's Date.now(), a
// leader whose wall clock ran ten minutes ahead emptied the window at its first write, and re-sent
// writes then applied twice). Its wall clock is read once, when the log holds no stamp yet, so
// that the log's time starts near the wall time as the stamps of older versions did.
//
// A new leader continues from the log's time as it can tell it: the latest stamp plus the time
// since it applied that entry, so the log's time runs on through an election. (It stood still
// there: after a partition the majority's new leader stamped from the last entry before the cut,
// seconds behind the time a cut-off client agent had learned and kept counting, and a write copy
// that agent sent into the black-holed link looked younger than it was when the link healed —
// multi-host-partitions.test.ts.) A server that applied the entry late runs behind by that much;
// the window then keeps ids longer, never shorter.
import { monotonicMs } from '../time';

export class LogClock {
  private term = -1;
  /** A log time and the monotonic time it was taken at; stamps advance from there. */
  private base = 0;
  private baseAt = 0;

  constructor(
    /** The latest stamp this server has applied (0 when its log and snapshot hold none). */
    private readonly latestInLog: () => number,
    /** That stamp advanced by this server's monotonic clock since it applied it (0: none). */
    private readonly logTimeNow: () => number = latestInLog,
    private readonly now: () => number = monotonicMs,
    private readonly wall: () => number = Date.now,
  ) {}

  /**
   * The log's time now as this leader would stamp an entry of `term`, without taking a stamp (0
   * while the log holds none): what a copy's time on its way is measured against. Never behind the
   * latest stamp applied, nor behind the stamps it has handed out.
   */
  peek(term: number): number {
    const inLog = this.latestInLog();
    if (inLog === 0 && term !== this.term) return 0;
    if (term !== this.term) return Math.max(inLog, this.logTimeNow());
    return Math.max(inLog, this.base + (this.now() - this.baseAt));
  }

  /** The stamp for an entry proposed now in `term` by this server, as leader. */
  stamp(term: number): number {
    const now = this.now();
    const inLog = this.latestInLog();
    if (term !== this.term) {
      // A new term: continue from the log as the predecessors left it, not from this server's
      // own earlier time in office.
      this.term = term;
      this.base = inLog > 0 ? Math.max(inLog, this.logTimeNow()) : this.wall();
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
