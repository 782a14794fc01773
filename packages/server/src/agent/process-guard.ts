// The last resort for what no runner caught: a promise rejected with nobody waiting for it, or an
// exception thrown from a callback. Node's default ends the process, which made one bad check
// definition take a server down on every start (issue 31). These are bugs, so they are not hidden:
// each is logged at error level with its stack, marked BUG, and counted in
// registry_runner_failures_total{runner="unhandled-rejection"|"uncaught-exception"}; the agent goes
// on serving. What ends the process on purpose is listed in docs/operations.md ("What ends the process").
import type { Logger } from '../runtime/logger';
import { describeError, type RunnerKind } from '../runtime/runner-failures';

export interface GuardedAgent {
  logger: Logger;
  metrics?: { runnerFailed(runner: string): void } | undefined;
}

let installed = false;

/** Installs the process-wide handlers once; `current` is the running agent, if any yet. */
export function guardProcess(current: () => GuardedAgent | undefined): void {
  if (installed) return;
  installed = true;
  const report = (runner: RunnerKind, err: unknown) => {
    const agent = current();
    const stack = err instanceof Error ? err.stack : undefined;
    if (!agent) {
      process.stderr.write(`registry: BUG: ${runner}: ${describeError(err)}${stack ? `\n${stack}` : ''}\n`);
      return;
    }
    agent.metrics?.runnerFailed(runner);
    agent.logger.error({ runner, err: describeError(err), stack }, `BUG: ${runner} (please report it); the agent carries on`);
  };
  process.on('unhandledRejection', (reason) => report('unhandled-rejection', reason));
  process.on('uncaughtException', (err) => report('uncaught-exception', err));
}
