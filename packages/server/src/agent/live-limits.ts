// Every listener's limits applied to a running agent (a reload, issue 33): the `limits` section,
// `http_config`'s timeouts and `snapshot_restore_max_bytes`. What each part does with new values is
// its own: the HTTP servers (http/http-server.ts reconfigureHttpServers), the server port's gate
// (raft/src/transport/inbound-limits.ts update), the DNS sockets (dns/server.ts setLimits); the
// restore size by the snapshots' own reload (snapshot/snapshots.ts). New caps decide the connections accepted
// from then on; timeouts and in-flight bounds apply to open connections as well; members' Raft links
// count against nothing and are never touched.
import { formatDurationMs } from '@registry/store';
import type { Server } from 'node:http';
import type { TcpTransport } from '@registry/raft';
import type { AgentConfig } from '../config/config';
import { resolveDnsLimits } from '../dns/limits';
import type { DnsServer } from '../dns/server';
import type { ConnectionLimiter } from '../http/connection-limit';
import { reconfigureHttpServers } from '../http/http-server';
import { softFileLimit } from '../limits/descriptor-budget';
import type { Logger } from '../runtime/logger';
import { serverPortLimits } from './server-port-limits';

/** The running listeners whose limits a reload changes (any may be absent: no HTTPS, DNS off…). */
export interface LimitedListeners {
  http?: { servers: Server[]; limiter: ConnectionLimiter };
  serverPort?: TcpTransport;
  dns?: DnsServer;
}

type Value = number | undefined;
const count = (v: Value) => (v === undefined ? 'derived' : String(v));
const duration = (v: Value) => (v === undefined ? 'derived' : formatDurationMs(v));

/** Each reloadable key: its name in the config file, how to read it, how to print it. */
const KEYS: ReadonlyArray<[string, (c: AgentConfig) => Value, (v: Value) => string]> = [
  ['http_config.headers_timeout', (c) => c.http.headersTimeoutMs, duration],
  ['http_config.request_timeout', (c) => c.http.requestTimeoutMs, duration],
  ['http_config.idle_timeout', (c) => c.http.idleTimeoutMs, duration],
  ['limits.http_max_conns', (c) => c.http.maxConns, count],
  ['limits.http_max_conns_per_client', (c) => c.http.maxConnsPerClient, count],
  ['limits.rpc_handshake_timeout', (c) => c.rpc.handshakeTimeoutMs, duration],
  ['limits.rpc_max_conns', (c) => c.rpc.maxConns, count],
  ['limits.rpc_max_conns_per_client', (c) => c.rpc.maxConnsPerClient, count],
  ['limits.rpc_idle_timeout', (c) => c.rpc.idleTimeoutMs, duration],
  ['limits.dns_max_conns', (c) => c.dns.limits.maxConns, count],
  ['limits.dns_max_conns_per_client', (c) => c.dns.limits.maxConnsPerClient, count],
  ['limits.dns_tcp_idle_timeout', (c) => c.dns.limits.tcpIdleTimeoutMs, duration],
  ['limits.dns_tcp_max_in_flight', (c) => c.dns.limits.tcpMaxInFlight, count],
  ['limits.dns_udp_max_pending', (c) => c.dns.limits.udpMaxPending, count],
  ['snapshot_restore_max_bytes', (c) => c.snapshot.restoreMaxBytes, count],
];

/** What differs between two configurations' limits, e.g. "limits.rpc_max_conns_per_client: 100 → 5". */
export function limitChanges(before: AgentConfig, after: AgentConfig): string[] {
  const out: string[] = [];
  for (const [key, read, show] of KEYS) {
    const a = read(before);
    const b = read(after);
    if (a !== b) out.push(`${key}: ${show(a)} → ${show(b)}`);
  }
  return out;
}

/** Applies `config`'s limits to the running listeners and logs the effective ones. */
export function applyLiveLimits(listeners: LimitedListeners, config: AgentConfig, logger: Logger): void {
  const nofile = softFileLimit();
  const applied: Record<string, unknown> = {};
  if (listeners.http) applied.http = reconfigureHttpServers(listeners.http.servers, listeners.http.limiter, config.http);
  if (listeners.serverPort) applied.serverPort = listeners.serverPort.setInboundLimits(serverPortLimits(config.rpc, nofile));
  if (listeners.dns) {
    const dns = resolveDnsLimits(config.dns.limits, nofile);
    listeners.dns.setLimits(dns);
    applied.dns = dns;
  }
  applied.snapshotRestoreMaxBytes = config.snapshot.restoreMaxBytes;
  logger.info(applied, 'limits applied');
}
