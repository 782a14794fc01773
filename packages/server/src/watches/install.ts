// Wires the config file's watches into an agent (server or client), once its HTTP API listens.
import type { Logger } from '../runtime/logger';
import type { RunnerFailures } from '../runtime/runner-failures';
import { AgentWatches } from './agent-watches';
import type { WatchDefinition } from './watch-definition';

/** What of the agent's configuration the watches read (AgentConfig has it; named here so that watches/ does not import config/, which imports their definitions). */
export interface WatchesConfig {
  consulCompat: boolean;
  watchHandlerTimeoutMs: number;
  watches: WatchDefinition[];
}

export function installWatches(deps: { config: WatchesConfig; httpAddress: () => string; failures: RunnerFailures; logger: Logger }): AgentWatches {
  const { config } = deps;
  const watches = new AgentWatches({
    httpAddress: deps.httpAddress,
    consulCompat: config.consulCompat,
    // A reload hands the new one to AgentWatches.reload (agent/reload.ts).
    handlerTimeoutMs: config.watchHandlerTimeoutMs,
    failures: deps.failures,
    logger: deps.logger,
  });
  watches.replace(config.watches);
  return watches;
}
