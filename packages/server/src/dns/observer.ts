// What the DNS sockets report to the metrics (metrics/metrics.ts implements it): each refusal,
// timeout and shed query is counted, so an operator can tell a limit is being hit.

export type TcpRefusal = 'max_conns' | 'max_conns_per_client';
export type TcpTimeout = 'first_query' | 'idle';

export interface DnsObserver {
  /** A TCP connection was closed at once: the server or its client address holds too many. */
  tcpRefused(reason: TcpRefusal): void;
  /** A TCP connection was closed for sending no whole query in time, or for being idle. */
  tcpTimedOut(reason: TcpTimeout): void;
  /** A UDP query was dropped unanswered: `limits.dns_udp_max_pending` queries were being answered. */
  udpShed(): void;
}
