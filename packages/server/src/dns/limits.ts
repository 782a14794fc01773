// The effective DNS limits: what the config file set, else defaults derived from the process's soft
// descriptor limit, so that a flood of TCP connections to the DNS port takes a bounded slice of
// descriptors and leaves the rest to storage, Raft and HTTP (issue 33, finding 1).
import type { DnsLimitsConfig } from './config';

/** The DNS TCP port's default share of the descriptor limit: an eighth (HTTP may take most of the rest, and a quarter stays for storage and Raft). */
const SHARE = 8;
const DERIVED_MIN = 16;
const DERIVED_MAX = 4096;
/** Used when the limit cannot be read (not Linux). */
const FALLBACK_NOFILE = 1024;
/** A new connection must send a whole query this soon (never later than the idle timeout). */
const FIRST_QUERY_MS = 5_000;

export interface DnsLimits {
  maxConns: number;
  /** 0: no per-client bound. */
  maxConnsPerClient: number;
  /** Until a connection's first whole query. */
  tcpFirstQueryTimeoutMs: number;
  tcpIdleTimeoutMs: number;
  tcpMaxInFlight: number;
  udpMaxPending: number;
}

/** The default `limits.dns_max_conns` for a soft descriptor limit. */
export function derivedDnsMaxConns(nofile: number): number {
  return Math.min(DERIVED_MAX, Math.max(DERIVED_MIN, Math.floor(nofile / SHARE)));
}

/** `nofile`: the soft RLIMIT_NOFILE, when known. */
export function resolveDnsLimits(c: DnsLimitsConfig, nofile: number | undefined): DnsLimits {
  const maxConns = c.maxConns ?? derivedDnsMaxConns(nofile ?? FALLBACK_NOFILE);
  return {
    maxConns,
    maxConnsPerClient: c.maxConnsPerClient ?? Math.max(1, Math.floor(maxConns / 2)),
    tcpFirstQueryTimeoutMs: Math.min(FIRST_QUERY_MS, c.tcpIdleTimeoutMs),
    tcpIdleTimeoutMs: c.tcpIdleTimeoutMs,
    tcpMaxInFlight: c.tcpMaxInFlight,
    udpMaxPending: c.udpMaxPending,
  };
}
