// The JSON form's numbers, kept as go-metrics' in-memory sink keeps them: per 10-second interval
// aligned to the wall clock, each series holding count, sum, sum of squares, min and max; the
// endpoint shows the last finished interval (or the current one while it is the only one).
// Prometheus gets cumulative values from prom-client instead; both are fed by the same hook call.

export const INTERVAL_MS = 10_000;

/**
 * Which 10 s interval it is now. A timer moves it at each boundary so that the hot path compares
 * an integer instead of reading the clock.
 */
export class IntervalClock {
  epoch = IntervalClock.epochAt(Date.now());
  /** The first interval this clock saw (before it ends there is no finished interval to show). */
  readonly firstEpoch = this.epoch;
  private timer: NodeJS.Timeout | null = null;

  static epochAt(ms: number): number {
    return Math.floor(ms / INTERVAL_MS);
  }

  start(): void {
    if (this.timer) return;
    const next = () => {
      this.epoch = IntervalClock.epochAt(Date.now());
      // A few ms past the boundary, so Date.now() is surely in the new interval.
      this.timer = setTimeout(next, INTERVAL_MS - (Date.now() % INTERVAL_MS) + 5);
      this.timer.unref();
    };
    next();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The interval the JSON form shows: the last finished one, or the first while it runs. */
  shownEpoch(): number {
    this.epoch = IntervalClock.epochAt(Date.now());
    return this.epoch > this.firstEpoch ? this.epoch - 1 : this.epoch;
  }
}

/** go-metrics' AggregateSample: what one interval saw of one series. */
export interface IntervalValues {
  count: number;
  sum: number;
  sumSq: number;
  min: number;
  max: number;
}

export class IntervalAggregate {
  private epoch = -1;
  private current: IntervalValues = empty();
  private previousEpoch = -1;
  private previous: IntervalValues = empty();

  constructor(private readonly clock: IntervalClock) {}

  add(v: number): void {
    if (this.epoch !== this.clock.epoch) this.roll();
    const c = this.current;
    c.count++;
    c.sum += v;
    c.sumSq += v * v;
    if (v < c.min) c.min = v;
    if (v > c.max) c.max = v;
  }

  /** The values of interval `epoch`, undefined when nothing was recorded in it. */
  at(epoch: number): IntervalValues | undefined {
    if (epoch === this.epoch && this.current.count > 0) return this.current;
    if (epoch === this.previousEpoch && this.previous.count > 0) return this.previous;
    return undefined;
  }

  private roll(): void {
    // Only the interval just before the new one can still be shown; anything older is dropped.
    this.previousEpoch = this.epoch;
    this.previous = this.current;
    this.epoch = this.clock.epoch;
    this.current = empty();
  }
}

function empty(): IntervalValues {
  return { count: 0, sum: 0, sumSq: 0, min: Infinity, max: -Infinity };
}
