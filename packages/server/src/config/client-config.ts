// Config keys of client agents and of the servers' view of them (docs/cluster.md "Client agents"):
// `client_heartbeat_timeout` (servers: a client not heard from this long gets a critical
// serfHealth; default 9 s, so with the sweep (a tenth of it) a dead client is critical within 10 s) and
// `anti_entropy_interval` (every agent, client or server: how often its services and checks are compared with the
// catalog; default 30 s, Consul's scales from 1 min with the cluster size).
import { parseDurationMs as parseDuration } from '@registry/store';

export interface ClientsConfig {
  heartbeatTimeoutMs: number;
  antiEntropyIntervalMs: number;
}

export function defaultClientsConfig(): ClientsConfig {
  return { heartbeatTimeoutMs: 9_000, antiEntropyIntervalMs: 30_000 };
}

export function applyClientsConfig(out: ClientsConfig, file: Record<string, unknown>, source: string): void {
  for (const [key, field, min] of [
    ['client_heartbeat_timeout', 'heartbeatTimeoutMs', 200],
    ['anti_entropy_interval', 'antiEntropyIntervalMs', 100],
  ] as const) {
    const v = file[key];
    if (v === undefined) continue;
    const ms = typeof v === 'string' ? parseDuration(v) : undefined;
    if (ms === undefined || ms < min) throw new Error(`${source}: ${key} must be a duration of at least ${min} ms, such as "10s"`);
    out[field] = ms;
  }
}
