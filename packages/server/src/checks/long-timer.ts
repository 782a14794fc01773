import { monotonicMs } from '../time';
// Timers for durations a user chose: Node fires a setTimeout longer than 2^31-1 ms (24.8 days) after
// 1 ms instead (TimeoutOverflowWarning), so a check with Interval "1000h" would probe in a hot loop
// and a TTL of "1000h" would expire at once. A long delay is waited out in steps no longer than that.

/** The longest delay setTimeout honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LongTimer {
  clear(): void;
}

/** `fn` after `ms` (any finite length; negative or NaN is 0), the process not kept alive for it. */
export function setLongTimeout(fn: () => void, ms: number): LongTimer {
  let timer: NodeJS.Timeout | undefined;
  let cleared = false;
  const due = monotonicMs() + (Number.isFinite(ms) && ms > 0 ? ms : 0);
  const arm = () => {
    const left = due - monotonicMs();
    if (left > MAX_TIMER_MS) {
      timer = setTimeout(arm, MAX_TIMER_MS);
    } else {
      timer = setTimeout(() => {
        if (!cleared) fn();
      }, Math.max(0, left));
    }
    timer.unref();
  };
  arm();
  return {
    clear() {
      cleared = true;
      clearTimeout(timer);
    },
  };
}
