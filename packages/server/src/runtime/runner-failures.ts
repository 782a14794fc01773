// Failures of the agent's background runners — check probes, managed proxies, watches, timers —
// and of promises nobody awaited: each is logged with what failed and why, and counted
// (registry_runner_failures_total{runner}), and the agent goes on (docs/operations.md, "What ends
// the process"). The runner itself marks the thing failed (a critical check, a proxy restarted
// later) and backs off; this only reports.
import type { Logger } from './logger';

export type RunnerKind =
  | 'check'
  | 'managed-proxy'
  | 'watch'
  | 'timer'
  /** The leader's session TTL timers (sessions/session-ttl.ts). */
  | 'session-ttl'
  /** Writing check results to the catalog, and its retries (local/catalog-sync.ts). */
  | 'catalog-sync'
  /** An agent's anti-entropy passes (local/anti-entropy.ts). */
  | 'anti-entropy'
  | 'restore'
  | 'unhandled-rejection'
  | 'uncaught-exception';

export interface RunnerFailures {
  /** `what` names the thing (a check ID, a proxy's service ID); `err` is why. */
  failed(runner: RunnerKind, what: string, err: unknown): void;
}

export const describeError = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function runnerFailures(logger: Logger, count: (runner: RunnerKind) => void): RunnerFailures {
  return {
    failed(runner, what, err) {
      count(runner);
      logger.error({ runner, what, err: describeError(err), stack: err instanceof Error ? err.stack : undefined }, `${runner} ${what} failed; carrying on without it`);
    },
  };
}

/** For parts started without a reporter (tests of one part): logs only. */
export const logOnlyFailures = (logger: Logger): RunnerFailures => runnerFailures(logger, () => undefined);
