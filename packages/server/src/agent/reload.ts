// Applying a re-read configuration to a running agent (SIGHUP, PUT /v1/agent/reload), as Consul's
// ReloadConfig does: the log level, ACL tokens, services and checks from config files, watches,
// node_meta, DNS settings, telemetry and every listener's limits (agent/live-limits.ts) take effect;
// addresses, ports, data dir, node name and datacenter need a restart and are only reported.
// A reload makes a new frozen snapshot (agent/config-snapshot.ts) and hands it to each part that
// reacts, through that part's own `reload`: `reloadParts` below is the one list of them.
import { Authorizer } from '@registry/acl';
import type { AgentTokens } from '../acl/agent-tokens';
import type { AgentConfig } from '../config/config';
import type { DnsConfig } from '../dns/config';
import type { LocalState } from '../local/local-state';
import type { ServiceDefinition } from '../local/local-services';
import type { TelemetryConfig } from '../metrics/config';
import type { AgentCheckDefinition } from '../schemas/agent-check';
import type { AgentWatches } from '../watches/agent-watches';
import { limitChanges } from './live-limits';
import { reloadedConfig } from './config-snapshot';
import { setLogLevel, type Logger } from '../runtime/logger';

/** Every part of a running agent that a reload changes (agent/common-agent.ts gathers them). */
export interface ReloadTargets {
  logger: Logger;
  tokens: AgentTokens;
  metrics: { reload(telemetry: TelemetryConfig): void };
  dns: { reload(config: DnsConfig): void } | undefined;
  /** Every listener's limits: HTTP(S), the server port, DNS (agent/live-limits.ts). */
  listeners: { applyLimits(config: AgentConfig): void };
  /** This node's facts sent to the catalog: a server's health reconcile, a client's heartbeats. */
  nodeMeta: { reload(nodeMeta: Record<string, string>): void } | undefined;
  /** Backups: a server's restore bound. */
  snapshots?: { reload(maxArchiveBytes: number): void };
  watches: AgentWatches | undefined;
  local: LocalState | undefined;
}

/** What a reloader runs on: the running snapshot, and the parts to tell. */
export interface Reloadable {
  /** The snapshot in force. */
  readonly config: Readonly<AgentConfig>;
  /** Installs a reload's snapshot as the one in force. */
  adopt(next: Readonly<AgentConfig>): void;
  reloadTargets(): ReloadTargets;
}

/**
 * An agent's reload (server or client): re-read the configuration, make the new snapshot, hand it
 * to every part, log what changed and what needs a restart. An invalid configuration throws
 * (ConfigError) and leaves the running one untouched. Reloads run one at a time.
 */
export class ConfigReloader {
  private reloading: Promise<ReloadResult> = Promise.resolve({ changed: [], needRestart: [] });

  constructor(
    private readonly agent: Reloadable,
    private readonly loadConfig: (() => AgentConfig) | undefined,
  ) {}

  reload(): Promise<ReloadResult> {
    const run = async (): Promise<ReloadResult> => {
      const targets = this.agent.reloadTargets();
      const log = targets.logger.child({ module: 'agent' });
      let loaded: AgentConfig;
      try {
        loaded = this.loadConfig ? this.loadConfig() : this.agent.config;
      } catch (err) {
        log.error({ err: (err as Error).message }, 'reload failed: the new configuration is invalid, keeping the running one');
        throw err;
      }
      const running = this.agent.config;
      const next = reloadedConfig(running, loaded);
      this.agent.adopt(next);
      const changed = await reloadParts(targets, running, next, loaded.acl.tokens);
      const result = { changed, needRestart: needRestart(running, loaded) };
      log.info({ changed: result.changed.length > 0 ? result.changed.join(', ') : 'nothing' }, 'configuration reloaded');
      if (result.needRestart.length > 0) log.warn({ settings: result.needRestart.join(', ') }, 'reload: these settings take effect only after a restart');
      return result;
    };
    const next = this.reloading.catch(() => undefined).then(run);
    this.reloading = next;
    return next;
  }
}

export interface ReloadResult {
  /** What took effect, e.g. "log_level: info → debug", "services: +web". */
  changed: string[];
  /** Settings that differ but only a restart applies. */
  needRestart: string[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Settings read once at start. */
const RESTART_ONLY: ReadonlyArray<[keyof AgentConfig, string]> = [
  ['nodeName', 'node_name'],
  ['datacenter', 'datacenter'],
  ['dataDir', 'data_dir'],
  ['bind', 'bind_addr'],
  ['advertise', 'advertise_addr'],
  ['client', 'client_addr'],
  ['httpPort', 'ports.http'],
  ['serverPort', 'ports.server'],
  ['dnsPort', 'ports.dns'],
  ['logJson', 'log_json'],
  ['raft', 'raft'],
];

function needRestart(running: Readonly<AgentConfig>, loaded: AgentConfig): string[] {
  const out = RESTART_ONLY.filter(([field]) => !same(running[field], loaded[field])).map(([, key]) => key);
  if (running.dns.domain !== loaded.dns.domain) out.push('domain');
  return out;
}

const serviceId = (d: ServiceDefinition) => d.ID || d.Name || '';
const checkId = (d: AgentCheckDefinition) => d.CheckID || d.ID || d.Name || '';

/**
 * Each part that reacts to a reload, told in turn; answers what took effect. `fileTokens` are the
 * re-read files' tokens (the snapshots share the running token record, which they are applied to).
 */
export async function reloadParts(t: ReloadTargets, prev: Readonly<AgentConfig>, next: Readonly<AgentConfig>, fileTokens: AgentConfig['acl']['tokens']): Promise<string[]> {
  const changed: string[] = [];
  if (prev.logLevel !== next.logLevel) {
    setLogLevel(t.logger, next.logLevel);
    changed.push(`log_level: ${prev.logLevel} → ${next.logLevel}`);
  }
  // As Consul: tokens set through /v1/agent/token and persisted win over the files on a reload too.
  for (const kind of await t.tokens.reload(fileTokens)) changed.push(`acl.tokens.${TOKEN_FIELD[kind]}`);
  if (!same({ ...prev.dns, limits: undefined }, { ...next.dns, limits: undefined })) {
    t.dns?.reload(next.dns);
    changed.push('dns_config');
  }
  const limits = limitChanges(prev, next);
  if (limits.length > 0) {
    t.listeners.applyLimits(next);
    t.snapshots?.reload(next.snapshot.restoreMaxBytes);
    changed.push(...limits);
  }
  if (!same(prev.nodeMeta, next.nodeMeta)) {
    t.nodeMeta?.reload(next.nodeMeta);
    changed.push('node_meta');
  }
  if (!same(prev.telemetry, next.telemetry)) {
    t.metrics.reload(next.telemetry);
    changed.push('telemetry');
  }
  if (prev.watchHandlerTimeoutMs !== next.watchHandlerTimeoutMs) changed.push('watch_handler_timeout');
  if (t.local) changed.push(...(await reloadDefinitions(t.local, prev.definitions, next.definitions)));
  if (t.watches?.reload(next)) changed.push(`watches: ${next.watches.length}`);
  return changed;
}

/** The names reload logs tokens by (the config's fields, as before). */
const TOKEN_FIELD = { default: 'default', agent: 'agent', agent_master: 'agentMaster', replication: 'replication' } as const;

/** Config-file services and checks: removed ones are deregistered, new and changed ones registered. */
async function reloadDefinitions(local: LocalState, before: AgentConfig['definitions'], after: AgentConfig['definitions']): Promise<string[]> {
  if (same(before, after)) return [];
  const all = Authorizer.allowAll();
  const out: string[] = [];
  const oldServices = new Map(before.services.map((d) => [serviceId(d), d]));
  const newServices = new Map(after.services.map((d) => [serviceId(d), d]));
  const oldChecks = new Map(before.checks.map((d) => [checkId(d), d]));
  const newChecks = new Map(after.checks.map((d) => [checkId(d), d]));
  for (const id of oldChecks.keys()) {
    if (newChecks.has(id)) continue;
    await local.removeCheck(id, all).catch(() => undefined);
    out.push(`checks: -${id}`);
  }
  for (const id of oldServices.keys()) {
    if (newServices.has(id)) continue;
    await local.removeService(id, all);
    out.push(`services: -${id}`);
  }
  for (const [id, def] of newServices) {
    const was = oldServices.get(id);
    if (was && same(was, def)) continue;
    await local.addService(def, all, { persist: false });
    out.push(`services: ${was ? '~' : '+'}${id}`);
  }
  for (const [id, def] of newChecks) {
    const was = oldChecks.get(id);
    if (was && same(was, def)) continue;
    await local.addCheck(def, all, false);
    out.push(`checks: ${was ? '~' : '+'}${id}`);
  }
  return out;
}
