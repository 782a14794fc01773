// A write's time budget is a duration on this process's monotonic clock, never a wall-clock
// deadline (issue 36, finding 2): a deadline fixed on the entering server's clock and compared on
// the leader's refused every write through a follower while their clocks disagreed. A budget
// travels between processes as the milliseconds it has left when sent, and the receiver counts
// it down on its own monotonic clock from the moment it reads the message.
//
// Time a message spent in transit is not counted — no clock of the sender's can be compared with
// the receiver's — except the part of it that the receiver itself can see: a process that was
// paused (SIGSTOP, a VM frozen, a loop blocked for seconds) read nothing meanwhile, so a message
// read right after the pause may have waited the whole pause in its socket (issue 31, finding 4:
// a server paused with a client's write unread forwarded it 40 s later with a fresh budget). A
// beat on a timer shows how long the loop has not run; that much is taken off a received budget.
import { monotonicMs } from '../time';

/** How often the beat runs; a received budget loses only what the loop missed beyond it. */
const BEAT_MS = 100;
/**
 * How long after a stall ended a message read is still taken to have waited through it. A process
 * resumed after SIGSTOP runs its overdue timers (this beat too) before it reads its sockets, and
 * the backlog takes a few loop turns to drain, so the stall must be remembered a little while.
 */
const STALL_MEMORY_MS = 1_000;
/** Gaps between beats shorter than this are ordinary loop delay, not a stall. */
const STALL_MIN_MS = 250;

let lastBeat = monotonicMs();
/** The last stall seen: how long the loop did not run, and when it ran again. */
let stallMs = 0;
let stallEndedAt = -Infinity;
let beat: NodeJS.Timeout | undefined;

function beating(): void {
  if (beat) return;
  lastBeat = monotonicMs();
  beat = setInterval(() => {
    const now = monotonicMs();
    const gap = now - lastBeat - BEAT_MS;
    if (gap >= STALL_MIN_MS) {
      stallMs = gap;
      stallEndedAt = now;
    }
    lastBeat = now;
  }, BEAT_MS);
  beat.unref(); // never what keeps a process (or a test runner) alive
}

/** How long a message read now may have waited unread: a stall going on, or one that just ended. */
function stalledMs(now: number): number {
  const ongoing = Math.max(0, now - lastBeat - BEAT_MS);
  return Math.max(ongoing, now - stallEndedAt < STALL_MEMORY_MS ? stallMs : 0);
}

/**
 * The monotonic end of a budget of `ms` that arrived in a message read just now: `ms` from now,
 * less the time this process's loop had not run before reading it.
 */
export function receivedBudgetEnd(ms: number): number {
  beating();
  const now = monotonicMs();
  return now + ms - stalledMs(now);
}

/** Start the beat (at a server's start, so the first message after a pause is judged too). */
export function watchLoopStalls(): void {
  beating();
}

/** receivedBudgetEnd() as the ms left from now. */
export function receivedBudgetLeft(ms: number): number {
  return receivedBudgetEnd(ms) - monotonicMs();
}
