// When checks run: interval checks (HTTP, TCP) probe on their interval with a little jitter, the
// first run staggered so checks registered together do not fire together; a TTL check turns
// critical when nobody refreshed it in time.
import type { ProbeResult } from './check-output';
import type { ConcurrencyLimit } from './concurrency-limit';

export interface Runner {
  stop(): void;
}

/** Extra delay on each run, as a fraction of the interval. */
const JITTER = 0.05;

export function startIntervalRunner(
  intervalMs: number,
  probe: () => Promise<ProbeResult>,
  onResult: (r: ProbeResult) => void,
  limiter: ConcurrencyLimit,
  random: () => number = Math.random,
): Runner {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = (delayMs: number) => {
    timer = setTimeout(() => void runOnce(), delayMs);
    timer.unref();
  };
  const runOnce = async () => {
    if (stopped) return;
    const result = await limiter.run(() => (stopped ? Promise.resolve(undefined) : probe()));
    if (stopped) return;
    if (result) onResult(result);
    schedule(intervalMs * (1 + random() * JITTER));
  };
  schedule(random() * intervalMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

export interface TtlTimer extends Runner {
  /** Start the countdown again (a pass/warn/fail/update arrived). */
  refresh(): void;
}

/** Calls `onExpire` when `ttlMs` passes without a refresh; the first countdown may be shorter. */
export function startTtlTimer(ttlMs: number, onExpire: () => void, firstMs = ttlMs): TtlTimer {
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(onExpire, Math.max(0, ms));
    timer.unref();
  };
  arm(firstMs);
  return {
    refresh: () => arm(ttlMs),
    stop: () => clearTimeout(timer),
  };
}
