// The `telemetry` stanza (Consul's): what the metrics endpoint serves and how gauges are named.
import { parseDurationMs } from '@registry/store';

export interface TelemetryConfig {
  /**
   * `telemetry.disable_hostname`: accepted, and without effect. Consul 1.4 puts the hostname into
   * gauge names only when a push sink (statsd, statsite, …) is configured — with its in-memory sink
   * alone it turns EnableHostname off (lib/telemetry.go) — and registry has no push sinks, so JSON
   * gauge names never carry it (`registry.runtime.heap_used_bytes`; issue #29).
   */
  disableHostname: boolean;
  /**
   * `telemetry.prometheus_retention_time`, ms. Consul serves `?format=prometheus` only when this is
   * positive (else 415). Registry keeps Consul's switch but defaults it on (24 h): Prometheus is how
   * most operators scrape today. prom-client series never expire, so the value only switches.
   */
  prometheusRetentionMs: number;
}

export function defaultTelemetryConfig(): TelemetryConfig {
  return { disableHostname: false, prometheusRetentionMs: 24 * 3600_000 };
}

/** Read a config file's `telemetry` section onto `cfg` (keys the schema allows but registry ignores pass through). */
export function applyTelemetryConfig(cfg: TelemetryConfig, file: Record<string, unknown>, source: string): TelemetryConfig {
  const t = file.telemetry;
  if (t === undefined || t === null) return cfg;
  if (typeof t !== 'object' || Array.isArray(t)) throw new Error(`${source}: telemetry must be an object`);
  const section = t as Record<string, unknown>;
  const out = { ...cfg };
  if (section.disable_hostname !== undefined) {
    if (typeof section.disable_hostname !== 'boolean') throw new Error(`${source}: telemetry.disable_hostname must be true or false`);
    out.disableHostname = section.disable_hostname;
  }
  const retention = section.prometheus_retention_time;
  if (retention !== undefined) {
    const ms = typeof retention === 'string' ? parseDurationMs(retention) : undefined;
    if (ms === undefined || ms < 0) throw new Error(`${source}: telemetry.prometheus_retention_time must be a duration such as "60s" ("0s" turns the Prometheus format off)`);
    out.prometheusRetentionMs = ms;
  }
  return out;
}
