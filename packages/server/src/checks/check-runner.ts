// When checks run: interval checks (HTTP, TCP) probe on their interval with a little jitter, the
// first run staggered so checks registered together do not fire together; a TTL check turns
// critical when nobody refreshed it in time. A runner keeps its own failures: a probe or handler
// that throws makes the check critical with the reason (reported through `failed`), never an
// exception that reaches the process, and one that keeps throwing is run less and less often.
import type { ProbeResult } from './check-output';
import type { ConcurrencyLimit } from './concurrency-limit';
import { setLongTimeout, type LongTimer } from './long-timer';

export interface Runner {
  stop(): void;
}

/** Extra delay on each run, as a fraction of the interval. */
const JITTER = 0.05;
/** A runner that failed this many times in a row waits up to this much longer between runs. */
const MAX_BACKOFF_FACTOR = 32;
const MAX_BACKOFF_MS = 5 * 60_000;

/** What a runner does with a failure of its own (not a critical result: a thrown error). */
export type RunnerFailed = (err: unknown) => void;

export function startIntervalRunner(
  intervalMs: number,
  probe: () => Promise<ProbeResult>,
  onResult: (r: ProbeResult) => void,
  limiter: ConcurrencyLimit,
  failed: RunnerFailed,
  random: () => number = Math.random,
): Runner {
  let stopped = false;
  let timer: LongTimer | undefined;
  let failures = 0;
  const schedule = (delayMs: number) => {
    timer = setLongTimeout(() => void runOnce(), delayMs);
  };
  const runOnce = async () => {
    if (stopped) return;
    try {
      const result = await limiter.run(() => (stopped ? Promise.resolve(undefined) : probe()));
      if (stopped) return;
      if (result) onResult(result);
      failures = 0;
    } catch (err) {
      if (stopped) return;
      failures++;
      try {
        failed(err);
        onResult({ status: 'critical', output: `check failed to run: ${err instanceof Error ? err.message : String(err)}` });
      } catch {
        // The failure was reported as far as it could be; the runner itself goes on.
      }
    }
    // After failures in a row: 2, 4, … 32 intervals (at most 5 min more), back to one on success.
    const delay = failures === 0 ? intervalMs : Math.max(intervalMs, Math.min(intervalMs * Math.min(2 ** failures, MAX_BACKOFF_FACTOR), MAX_BACKOFF_MS));
    schedule(delay * (1 + random() * JITTER));
  };
  schedule(random() * intervalMs);
  return {
    stop() {
      stopped = true;
      timer?.clear();
    },
  };
}

export interface TtlTimer extends Runner {
  /** Start the countdown again (a pass/warn/fail/update arrived). */
  refresh(): void;
}

/** Calls `onExpire` when `ttlMs` passes without a refresh; the first countdown may be shorter. */
export function startTtlTimer(ttlMs: number, onExpire: () => void, failed: RunnerFailed, firstMs = ttlMs): TtlTimer {
  let timer: LongTimer | undefined;
  const expire = () => {
    try {
      onExpire();
    } catch (err) {
      failed(err);
    }
  };
  const arm = (ms: number) => {
    timer?.clear();
    timer = setLongTimeout(expire, ms);
  };
  arm(firstMs);
  return {
    refresh: () => arm(ttlMs),
    stop: () => timer?.clear(),
  };
}
