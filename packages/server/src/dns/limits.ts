// The effective DNS limits: what the config file set, else defaults derived from the process's soft
// descriptor limit, so that a flood of TCP connections to the DNS port takes a bounded slice of
// descriptors and leaves the rest to storage, Raft and HTTP (issue 33, finding 1). The slice is the
// DNS port's share in limits/descriptor-budget.ts, which shares the limit out among every listener.
import { descriptorShares, FALLBACK_NOFILE } from '../limits/descriptor-budget';
import type { DnsLimitsConfig } from './config';
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

/** The default `limits.dns_max_conns` for a soft descriptor limit: the DNS port's share. */
export function derivedDnsMaxConns(nofile: number): number {
  return descriptorShares(nofile).dns;
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
