// The DNS interface's configuration (Consul's `domain` and `dns_config`, and the `limits.dns_*`
// keys): defaults, reading the config-file sections, and the TTL a service's answers carry. The
// port (`ports.dns`, `-dns-port`) sits with the other ports in config/config.ts.
import { parseDurationMs } from '@registry/store';

export const DEFAULT_DNS_PORT = 8600;

export interface DnsConfig {
  /** The domain answered for, without dots at the ends ("registry", as Consul's "consul"). */
  domain: string;
  /** TTL of node lookups, seconds (`node_ttl`, default 0). */
  nodeTtlS: number;
  /**
   * TTLs of service lookups, seconds, by service name (`service_ttl`); a key ending in `*` is a
   * prefix (`*` alone: every service). An exact name wins, then the longest prefix; else 0.
   */
  serviceTtlS: Record<string, number>;
  /** Read from this server's store without asking the leader (`allow_stale`, default true). */
  allowStale: boolean;
  /** A stale answer older than this (time since the leader was last heard) is re-read from the leader (`max_stale`, default 87600h). */
  maxStaleMs: number;
  /** Only instances whose checks all pass; otherwise warning passes too (`only_passing`). */
  onlyPassing: boolean;
  /** Answers in a UDP response to a client without EDNS (`udp_answer_limit`, default 3). */
  udpAnswerLimit: number;
  /** Also set TC when `udp_answer_limit` cut the answer (`enable_truncate`, default false). */
  enableTruncate: boolean;
  /** The SOA's timers, seconds (`soa`: refresh, retry, expire, min_ttl). */
  soa: { refresh: number; retry: number; expire: number; minTtl: number };
  /** What one peer may cost the DNS sockets (`limits.dns_*`; docs/operations.md "DNS limits"). */
  limits: DnsLimitsConfig;
}

export interface DnsLimitsConfig {
  /** Open TCP connections at most (`limits.dns_max_conns`); undefined → derived from the soft RLIMIT_NOFILE (dns/limits.ts). */
  maxConns: number | undefined;
  /** Open TCP connections from one address at most (`limits.dns_max_conns_per_client`); undefined → half of maxConns, 0 → no per-client bound. */
  maxConnsPerClient: number | undefined;
  /** A TCP connection with no query received and no answer sent for this long is closed (`limits.dns_tcp_idle_timeout`). */
  tcpIdleTimeoutMs: number;
  /** Queries of one TCP connection being answered or waiting to be written, at most (`limits.dns_tcp_max_in_flight`). */
  tcpMaxInFlight: number;
  /** UDP queries being answered at once, at most; beyond it a datagram is dropped (`limits.dns_udp_max_pending`). */
  udpMaxPending: number;
}

export function defaultDnsLimits(): DnsLimitsConfig {
  return { maxConns: undefined, maxConnsPerClient: undefined, tcpIdleTimeoutMs: 10_000, tcpMaxInFlight: 16, udpMaxPending: 1024 };
}

export function defaultDnsConfig(): DnsConfig {
  return {
    domain: 'registry',
    nodeTtlS: 0,
    serviceTtlS: {},
    allowStale: true,
    maxStaleMs: 87_600 * 3600_000,
    onlyPassing: false,
    udpAnswerLimit: 3,
    enableTruncate: false,
    soa: { refresh: 3600, retry: 600, expire: 86_400, minTtl: 0 },
    limits: defaultDnsLimits(),
  };
}

type Json = Record<string, unknown>;

function seconds(v: unknown, what: string): number {
  const ms = typeof v === 'string' ? parseDurationMs(v) : undefined;
  if (ms === undefined || ms < 0) throw new Error(`${what} must be a duration such as "30s"`);
  return Math.floor(ms / 1000);
}

function bool(v: unknown, what: string): boolean {
  if (typeof v !== 'boolean') throw new Error(`${what} must be true or false`);
  return v;
}

function uint(v: unknown, what: string, min = 0): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 0xffffffff) throw new Error(`${what} must be an integer ≥ ${min}`);
  return v;
}

/** Apply a config file's `domain` and `dns_config` onto `cfg` (returns a new object). */
export function applyDnsConfig(cfg: DnsConfig, file: Json, source: string): DnsConfig {
  const out: DnsConfig = structuredClone(cfg);
  if (file.domain !== undefined) {
    if (typeof file.domain !== 'string' || !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(file.domain)) {
      throw new Error(`${source}: domain must be a DNS name such as "registry"`);
    }
    out.domain = file.domain.replace(/\.$/, '').toLowerCase();
  }
  applyDnsLimits(out.limits, file.limits, source);
  const d = file.dns_config;
  if (d === undefined || d === null) return out;
  if (typeof d !== 'object' || Array.isArray(d)) throw new Error(`${source}: dns_config must be an object`);
  const c = d as Json;
  const at = (k: string) => `${source}: dns_config.${k}`;
  if (c.node_ttl !== undefined) out.nodeTtlS = seconds(c.node_ttl, at('node_ttl'));
  if (c.service_ttl !== undefined) {
    if (typeof c.service_ttl !== 'object' || c.service_ttl === null || Array.isArray(c.service_ttl)) throw new Error(`${at('service_ttl')} must be an object of service name → duration`);
    out.serviceTtlS = {};
    for (const [name, v] of Object.entries(c.service_ttl as Json)) out.serviceTtlS[name.toLowerCase()] = seconds(v, `${at('service_ttl')}["${name}"]`);
  }
  if (c.allow_stale !== undefined) out.allowStale = bool(c.allow_stale, at('allow_stale'));
  if (c.max_stale !== undefined) out.maxStaleMs = seconds(c.max_stale, at('max_stale')) * 1000;
  if (c.only_passing !== undefined) out.onlyPassing = bool(c.only_passing, at('only_passing'));
  if (c.udp_answer_limit !== undefined) out.udpAnswerLimit = uint(c.udp_answer_limit, at('udp_answer_limit'), 1);
  if (c.enable_truncate !== undefined) out.enableTruncate = bool(c.enable_truncate, at('enable_truncate'));
  if (c.soa !== undefined) {
    if (typeof c.soa !== 'object' || c.soa === null) throw new Error(`${at('soa')} must be an object`);
    const s = c.soa as Json;
    for (const [k, field] of [['refresh', 'refresh'], ['retry', 'retry'], ['expire', 'expire'], ['min_ttl', 'minTtl']] as const) {
      if (s[k] !== undefined) out.soa[field] = uint(s[k], `${at('soa')}.${k}`);
    }
  }
  return out;
}

/** The `limits.dns_*` keys (the `limits` section also holds other listeners' keys, read elsewhere). */
function applyDnsLimits(out: DnsLimitsConfig, section: unknown, source: string): void {
  if (section === undefined || section === null || typeof section !== 'object' || Array.isArray(section)) return; // shape errors: config/config.ts
  const l = section as Json;
  const at = (k: string) => `${source}: limits.${k}`;
  if (l.dns_max_conns !== undefined) out.maxConns = uint(l.dns_max_conns, at('dns_max_conns'), 1);
  if (l.dns_max_conns_per_client !== undefined) out.maxConnsPerClient = uint(l.dns_max_conns_per_client, at('dns_max_conns_per_client'));
  if (l.dns_tcp_idle_timeout !== undefined) {
    const ms = typeof l.dns_tcp_idle_timeout === 'string' ? parseDurationMs(l.dns_tcp_idle_timeout) : undefined;
    if (ms === undefined || ms < 1) throw new Error(`${at('dns_tcp_idle_timeout')} must be a duration such as "10s"`);
    out.tcpIdleTimeoutMs = Math.round(ms);
  }
  if (l.dns_tcp_max_in_flight !== undefined) out.tcpMaxInFlight = uint(l.dns_tcp_max_in_flight, at('dns_tcp_max_in_flight'), 1);
  if (l.dns_udp_max_pending !== undefined) out.udpMaxPending = uint(l.dns_udp_max_pending, at('dns_udp_max_pending'), 1);
}

/** The TTL (seconds) of answers about `service`: exact name, else the longest `prefix*` key, else 0. */
export function serviceTtlS(cfg: DnsConfig, service: string): number {
  const name = service.toLowerCase();
  const exact = cfg.serviceTtlS[name];
  if (exact !== undefined) return exact;
  let best: { len: number; ttl: number } | undefined;
  for (const [key, ttl] of Object.entries(cfg.serviceTtlS)) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (name.startsWith(prefix) && (!best || prefix.length > best.len)) best = { len: prefix.length, ttl };
  }
  return best?.ttl ?? 0;
}
