// The clock for every duration, timeout, backoff and "how long since" in this package (issue #36).
// It is the process's monotonic clock, which only moves forward at the rate of real time: an NTP
// step, a resumed VM or a bad RTC moves the wall clock (Date.now()) and must never stretch a
// reconnect backoff to an hour, nor make a leader's last contact look minutes old.
import { performance } from 'node:perf_hooks';

/** Milliseconds on the monotonic clock. Only differences mean anything; never store or send it. */
export function monotonicMs(): number {
  return performance.now();
}
