// Runtime gauges: heap and RSS read at scrape time, and the event-loop delay over the last
// finished 10 s window (perf_hooks' histogram, reset at each window so a stall shows for one
// window, then goes — a lifetime p99 would hide it after a while).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { INTERVAL_MS } from './interval-aggregate';

export interface LoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class EventLoopDelay {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private last: LoopDelay = { p50Ms: 0, p99Ms: 0, maxMs: 0 };
  private timer: NodeJS.Timeout | null = null;

  start(): void {
    if (this.timer) return;
    this.histogram.enable();
    this.timer = setInterval(() => this.roll(), INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.histogram.disable();
  }

  /** The last finished window (the running one until a window has finished). */
  current(): LoopDelay {
    return this.last.maxMs > 0 ? this.last : this.read();
  }

  private roll(): void {
    this.last = this.read();
    this.histogram.reset();
  }

  private read(): LoopDelay {
    const h = this.histogram;
    // The histogram is in ns; it reports NaN/huge values while it holds no sample.
    if (h.count === 0) return { p50Ms: 0, p99Ms: 0, maxMs: 0 };
    return { p50Ms: h.percentile(50) / 1e6, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6 };
  }
}
