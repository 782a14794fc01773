// Wires the config file's watches into an agent (server or client), once its HTTP API listens.
import type { Logger } from '../runtime/logger';
import type { RunnerFailures } from '../runtime/runner-failures';
import type { AgentConfig } from '../config/config';
import { AgentWatches } from './agent-watches';

export function installWatches(deps: { config: AgentConfig; httpAddress: () => string; failures: RunnerFailures; logger: Logger }): AgentWatches {
  const { config } = deps;
  const watches = new AgentWatches({
    httpAddress: deps.httpAddress,
    // Read on use: a reload changes them in place (agent/reload.ts).
    consulCompat: () => config.consulCompat,
    handlerTimeoutMs: () => config.watchHandlerTimeoutMs,
    failures: deps.failures,
    logger: deps.logger,
  });
  watches.replace(config.watches);
  return watches;
}
