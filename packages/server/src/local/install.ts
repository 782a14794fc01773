// Builds this agent's local state the same way on both agent kinds: the syncer (check results and
// anti-entropy, over the catalog view the agent kind has), the LocalState with its files under the
// data dir, maintenance; then loads the config's and the data dir's services and checks into it
// before the agent listens (the caller awaits this), written to the catalog in the background.
// The syncer's passes are started by the caller (a server once the restored state is in the
// catalog, a client once a server has its node too: agent/).
import type { Command, Store } from '@registry/store';
import type { Logger } from '../runtime/logger';
import type { RunnerFailures } from '../runtime/runner-failures';
import type { NodeChecksRead } from '../checks/alias-check';
import type { ScriptCheckSettings } from '../checks/script-gate';
import type { AgentCheckDefinition } from '../schemas/agent-check';
import type { NodeView } from './anti-entropy';
import { LocalState } from './local-state';
import { LocalStateFiles } from './local-state-files';
import type { ServiceDefinition } from './local-services';
import { Maintenance } from './maintenance';
import { Syncer } from './syncer';

/** Probes in flight at once on one agent. */
const MAX_CONCURRENT_PROBES = 32;

/**
 * What of the agent's configuration the local state reads (AgentConfig has it; named here so that
 * local/ does not import config/, which imports its definitions' validation). Read on use: a reload
 * changes the object in place.
 */
export interface LocalConfig {
  nodeName: string;
  acl: { enabled: boolean };
  checks: { intervalMinMs: number; deregisterMinMs: number; updateIntervalMs: number; enableScriptChecks: boolean; enableLocalScriptChecks?: boolean };
  connect: { proxy: { allowManagedApiRegistration: boolean }; proxyPorts?: { min: number; max: number }; sidecarPorts?: { min: number; max: number } };
  definitions: { services: ServiceDefinition[]; checks: AgentCheckDefinition[] };
}

export interface LocalStateParts {
  local: LocalState;
  syncer: Syncer;
  maintenance: Maintenance;
}

export async function installLocalState(deps: {
  config: LocalConfig;
  dataDir: string;
  /** The catalog view's store: the replicated one on a server, the node mirror's on a client. */
  store: Store;
  /** This node's rows in the catalog, freshly read (a client refreshes its mirror here). */
  view(): Promise<NodeView>;
  /** A write with the agent's own authority. */
  apply(cmd: Command): Promise<unknown>;
  /** Another node's checks through the agent cache (alias checks). */
  nodeChecks: NodeChecksRead;
  keepService?: (id: string) => boolean;
  /** The local state's and the check results' logger. */
  logger: Logger;
  /** The anti-entropy passes' logger. */
  syncLogger: Logger;
  failures: RunnerFailures;
}): Promise<LocalStateParts> {
  const { config } = deps;
  const node = config.nodeName;
  const files = new LocalStateFiles(deps.dataDir, deps.logger);
  const syncer = new Syncer({
    node, view: deps.view, apply: deps.apply, outputIntervalMs: config.checks.updateIntervalMs,
    keepService: deps.keepService, logger: deps.logger, passLogger: deps.syncLogger, failures: deps.failures,
  });
  const scripts: ScriptCheckSettings = { remote: config.checks.enableScriptChecks, local: config.checks.enableLocalScriptChecks ?? config.checks.enableScriptChecks };
  const local = new LocalState({
    node,
    store: deps.store,
    registerPolicy: () => ({
      allowManagedApiRegistration: config.connect.proxy.allowManagedApiRegistration,
      managedPorts: config.connect.proxyPorts,
      sidecarPorts: config.connect.sidecarPorts,
    }),
    nodeChecks: deps.nodeChecks,
    apply: deps.apply,
    results: syncer.results,
    aclsEnabled: config.acl.enabled,
    files,
    floors: { intervalMinMs: config.checks.intervalMinMs, deregisterMinMs: config.checks.deregisterMinMs },
    maxConcurrentProbes: MAX_CONCURRENT_PROBES,
    logger: deps.logger,
    failures: deps.failures,
    scripts,
  });
  syncer.follow(local);
  const maintenance = new Maintenance({ node, service: (id) => local.service(id), store: deps.store, apply: deps.apply, files, logger: deps.logger });
  await local.load(config.definitions);
  void maintenance.restore(local.restored);
  return { local, syncer, maintenance };
}
