// Wires the agent's checks in: the runners and their catalog sync, the files under the data dir,
// and the restore of the config's and the data dir's services and checks: loaded into the agent's
// state before it listens (the caller awaits this), written to the catalog in the background.
import type { Command, Store } from '@registry/store';
import type { Logger } from '../runtime/logger';
import type { RunnerFailures } from '../runtime/runner-failures';
import type { AgentConfig } from '../config/config';
import type { Mesh } from '../connect/mesh';
import { AgentChecks } from './agent-checks';
import { LocalStateFiles } from './local-state-files';

/** Probes in flight at once on one agent. */
const MAX_CONCURRENT_PROBES = 32;

export async function installAgentChecks(deps: {
  config: AgentConfig;
  dataDir: string;
  mesh: Mesh;
  store: Store;
  apply: (cmd: Command) => Promise<unknown>;
  aclsEnabled: boolean;
  logger: Logger;
  failures: RunnerFailures;
}): Promise<AgentChecks> {
  const { config } = deps;
  const checks = new AgentChecks({
    node: config.nodeName,
    mesh: deps.mesh,
    store: deps.store,
    apply: deps.apply,
    aclsEnabled: deps.aclsEnabled,
    files: new LocalStateFiles(deps.dataDir, deps.logger),
    floors: { intervalMinMs: config.checks.intervalMinMs, deregisterMinMs: config.checks.deregisterMinMs },
    outputIntervalMs: config.checks.updateIntervalMs,
    maxConcurrentProbes: MAX_CONCURRENT_PROBES,
    logger: deps.logger,
    failures: deps.failures,
    scripts: { remote: config.checks.enableScriptChecks, local: config.checks.enableLocalScriptChecks ?? config.checks.enableScriptChecks },
  });
  await checks.load(config.definitions);
  return checks;
}
