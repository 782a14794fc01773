// Applying a re-read configuration to a running agent (SIGHUP, PUT /v1/agent/reload), as Consul's
// reload does: the log level, ACL tokens, services and checks from config files, watches, node_meta,
// DNS settings, telemetry and every listener's limits (agent/live-limits.ts) take effect; addresses,
// ports, data dir, node name and datacenter need a restart and are only reported. The running
// config object is updated in place — down to the
// node_meta and telemetry objects themselves — because the parts that use it hold those objects and
// read them on every use: token lookups, the DNS handler, the metrics endpoint (telemetry), and this
// server's facts, which the leader reads every second and re-registers the node from when they
// change (node_meta reaches the catalog that way, cluster/server-health.ts).
import { Authorizer } from '@registry/acl';
import { AgentTokens } from '../acl/agent-tokens';
import type { AgentConfig } from '../config/config';
import type { LocalState } from '../local/local-state';
import type { ServiceDefinition } from '../local/local-services';
import type { AgentCheckDefinition } from '../schemas/agent-check';
import type { AgentWatches } from '../watches/agent-watches';
import { adoptLimits, limitChanges } from './live-limits';
import { addLogSecret, setLogLevel, type Logger } from '../runtime/logger';

export interface Reloadable {
  config: AgentConfig;
  logger: Logger;
  local: LocalState | undefined;
  watches?: AgentWatches | undefined;
  dataDir: string;
  /** Applies the running config's limits to the listeners (called after they were copied into it). */
  applyLimits?(): void;
}

/**
 * An agent's reload (server or client): re-read the configuration, apply it, log what changed and
 * what needs a restart. An invalid configuration throws (ConfigError) and leaves the running one
 * untouched. Reloads run one at a time.
 */
export class ConfigReloader {
  private reloading: Promise<ReloadResult> = Promise.resolve({ changed: [], needRestart: [] });

  constructor(
    private readonly agent: Reloadable,
    private readonly loadConfig: (() => AgentConfig) | undefined,
  ) {}

  reload(): Promise<ReloadResult> {
    const run = async (): Promise<ReloadResult> => {
      const log = this.agent.logger.child({ module: 'agent' });
      let next: AgentConfig;
      try {
        next = this.loadConfig ? this.loadConfig() : this.agent.config;
      } catch (err) {
        log.error({ err: (err as Error).message }, 'reload failed: the new configuration is invalid, keeping the running one');
        throw err;
      }
      const result = await applyReload(this.agent, next);
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

/** Fields other parts of the agent read on use (added by their own issues; copied when present). */
const READ_ON_USE: ReadonlyArray<[string, string]> = [
  ['nodeMeta', 'node_meta'],
  ['telemetry', 'telemetry'],
  ['watchHandlerTimeoutMs', 'watch_handler_timeout'],
];

const serviceId = (d: ServiceDefinition) => d.ID || d.Name || '';
const checkId = (d: AgentCheckDefinition) => d.CheckID || d.ID || d.Name || '';

export async function applyReload(agent: Reloadable, next: AgentConfig): Promise<ReloadResult> {
  const cfg = agent.config;
  const changed: string[] = [];
  const needRestart = RESTART_ONLY.filter(([field]) => !same(cfg[field], next[field])).map(([, key]) => key);
  if (cfg.dns.domain !== next.dns.domain) needRestart.push('domain');

  if (cfg.logLevel !== next.logLevel) {
    setLogLevel(agent.logger, next.logLevel);
    changed.push(`log_level: ${cfg.logLevel} → ${next.logLevel}`);
    cfg.logLevel = next.logLevel;
  }

  const tokensBefore = { ...cfg.acl.tokens };
  for (const key of ['agent', 'default', 'agentMaster', 'replication'] as const) {
    addLogSecret(next.acl.tokens[key]);
    cfg.acl.tokens[key] = next.acl.tokens[key];
  }
  // As Consul: tokens set through /v1/agent/token and persisted win over the files on a reload too.
  if (cfg.acl.enableTokenPersistence) await new AgentTokens(cfg.acl.tokens, agent.dataDir).load();
  for (const key of ['agent', 'default', 'agentMaster', 'replication'] as const) {
    if (tokensBefore[key] !== cfg.acl.tokens[key]) changed.push(`acl.tokens.${key}`);
  }

  // dns.limits are limits (below), kept as the running object.
  const dns = { ...next.dns, domain: cfg.dns.domain, limits: cfg.dns.limits };
  if (!same(cfg.dns, dns)) {
    Object.assign(cfg.dns, dns);
    changed.push('dns_config');
  }

  const limits = limitChanges(cfg, next);
  if (limits.length > 0) {
    adoptLimits(cfg, next);
    agent.applyLimits?.();
    changed.push(...limits);
  }

  const open = cfg as unknown as Record<string, unknown>;
  const incoming = next as unknown as Record<string, unknown>;
  for (const [field, key] of READ_ON_USE) {
    if (!(field in incoming) || same(open[field], incoming[field])) continue;
    if (isRecord(open[field]) && isRecord(incoming[field])) replaceContents(open[field], incoming[field]);
    else open[field] = incoming[field];
    changed.push(key);
  }

  changed.push(...(await reloadDefinitions(agent, next)));
  // A changed list replaces every watch, as Consul's reloadWatches (an unchanged one keeps running).
  if (!same(cfg.watches, next.watches)) {
    agent.watches?.replace(next.watches);
    cfg.watches = next.watches;
    changed.push(`watches: ${next.watches.length}`);
  }
  return { changed, needRestart };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `target` becomes a copy of `source`, keeping its identity (others hold a reference to it). */
function replaceContents(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const k of Object.keys(target)) if (!(k in source)) delete target[k];
  Object.assign(target, source);
}

/** Config-file services and checks: removed ones are deregistered, new and changed ones registered. */
async function reloadDefinitions(agent: Reloadable, next: AgentConfig): Promise<string[]> {
  const before = agent.config.definitions;
  const after = next.definitions;
  const local = agent.local;
  if (!local || same(before, after)) return [];
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
  agent.config.definitions = after;
  return out;
}
