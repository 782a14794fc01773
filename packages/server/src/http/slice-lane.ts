// The share of the server that large answers may take together while other work waits (issue
// #16). A reader looping over the 100,000-node catalog (15 MB an answer) took ~0.6 core between the
// leader writing its answers and the client reading them; on a small machine that CPU came out of
// the writes (16 writers fell to ~30 % of their rate alone) even though no slice held the loop for
// more than a millisecond or two. So slices of large answers — all of them, whoever asked — run one
// at a time in this lane, and while the event loop has other work (writes, Raft, small reads: more
// than 15 % of the loop in the last window, besides the slices), a slice of t ms shuts the lane for
// t·(1/duty − 1) ms, so that large answers together use at most `duty` of the loop. With nothing
// else to do, slices follow each other with one turn of the loop between them (setImmediate), as
// fast as the client reads: pacing costs a large answer time only when someone else needs it.
import { performance } from 'node:perf_hooks';

/** The share of the loop large answers may take together while other work waits. */
export const DEFAULT_LARGE_ANSWER_DUTY = 0.25;

/**
 * The share from REGISTRY_LARGE_ANSWER_DUTY, for benchmarks only (1 turns the pacing off;
 * docs/benchmarks/history.md compares 0.25, 0.5 and 1); the default when unset or out of (0, 1].
 */
export function largeAnswerDuty(setting: string | undefined): number {
  const duty = Number(setting ?? DEFAULT_LARGE_ANSWER_DUTY);
  return Number.isFinite(duty) && duty > 0 && duty <= 1 ? duty : DEFAULT_LARGE_ANSWER_DUTY;
}

/** How often the lane looks at what else the event loop did. */
const WINDOW_MS = 100;
/** Other work above this share of the loop turns pacing on for the next window. */
const BUSY = 0.15;

export class SliceLane {
  private readonly waiting: Array<() => void> = [];
  private busy = false;
  private openAt = 0;
  private scheduled = false;
  /** Pacing applies (others used the loop in the last window). */
  private paced = false;
  private windowStart = performance.now();
  private windowElu = performance.eventLoopUtilization();
  /** Time the lane's slices took in the current window. */
  private windowSlicesMs = 0;

  constructor(private readonly duty: number) {}

  /** Resolves when the caller may run its slice; it must call done() after, whatever happens. */
  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.pump();
    });
  }

  /** The slice took `ms`: with others waiting, the lane shuts for the time that keeps the share. */
  done(ms: number): void {
    this.busy = false;
    this.windowSlicesMs += ms;
    this.look();
    this.openAt = this.paced ? performance.now() + ms * (1 / this.duty - 1) : 0;
    this.pump();
  }

  /** Whether the event loop had other work in the window that just ended (then pace the next). */
  private look(): void {
    const now = performance.now();
    const elapsed = now - this.windowStart;
    if (elapsed < WINDOW_MS) return;
    const elu = performance.eventLoopUtilization(this.windowElu);
    const others = elu.active - this.windowSlicesMs;
    this.paced = this.duty < 1 && others > BUSY * elapsed;
    this.windowStart = now;
    this.windowElu = performance.eventLoopUtilization();
    this.windowSlicesMs = 0;
  }

  private pump(): void {
    if (this.busy || this.scheduled || this.waiting.length === 0) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      if (this.busy || this.waiting.length === 0) return;
      if (performance.now() < this.openAt) {
        this.pump();
        return;
      }
      this.busy = true;
      this.waiting.shift()!();
    };
    // Always through the event loop, so that I/O gets its turn between two slices.
    const wait = this.openAt - performance.now();
    if (wait > 0) setTimeout(run, Math.ceil(wait));
    else setImmediate(run);
  }
}
