// The running configuration as an immutable snapshot (Consul's RuntimeConfig): frozen when the agent
// starts, and each reload makes a new one (agent/reload.ts) instead of changing the running one, so
// a part holding a snapshot never sees it change under it; what a reload changes reaches each part
// through its own `reload(next)`. One part of the configuration object is state rather than
// configuration and is not frozen: `acl.tokens`, the agent's token record, which PUT
// /v1/agent/token and the persisted tokens change at run time (acl/agent-tokens.ts, Consul's token
// store); every snapshot holds that same record.
import type { AgentConfig } from '../config/config';

function deepFreeze(value: unknown, skip: unknown): void {
  if (typeof value !== 'object' || value === null || value === skip || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v, skip);
}

/** Freezes `config` in place, all but its token record; answers it. */
export function freezeConfig(config: AgentConfig): Readonly<AgentConfig> {
  deepFreeze(config, config.acl.tokens);
  return config;
}

/**
 * The snapshot a reload makes: the running one, with what a reload applies taken from `loaded`
 * (the re-read files). Settings read once at start (ports, addresses, names, the data dir, the
 * DNS domain, …) keep their running values, so the snapshot says what is in force; reload.ts
 * reports them as needing a restart. The token record is the running one (acl/agent-tokens.ts
 * applies the files' tokens to it).
 */
export function reloadedConfig(running: Readonly<AgentConfig>, loaded: AgentConfig): Readonly<AgentConfig> {
  return freezeConfig({
    ...running,
    logLevel: loaded.logLevel,
    // Every listener's limits (agent/live-limits.ts) and the DNS settings but its domain.
    http: loaded.http,
    rpc: loaded.rpc,
    snapshot: loaded.snapshot,
    dns: { ...loaded.dns, domain: running.dns.domain },
    nodeMeta: loaded.nodeMeta,
    telemetry: loaded.telemetry,
    watchHandlerTimeoutMs: loaded.watchHandlerTimeoutMs,
    watches: loaded.watches,
    definitions: loaded.definitions,
    acl: running.acl,
  });
}
