// What Connect proxies report about their connections, per listener with Consul 1.4's labels
// (`inbound` {dst}, `upstream` {src, dst_type, dst}), and what takes those reports. The shapes
// live here, beside the series they feed (metrics.ts), so that metrics/ imports nothing of proxy/:
// proxies count (proxy/connection-stats.ts) and report (proxy/proxy-metrics.ts) in these terms.

export type ListenerKind = 'inbound' | 'upstream';

/** One listener's counts, as reported (cumulative since the proxy started; conns is current). */
export interface ListenerCounts {
  kind: ListenerKind;
  labels: Record<string, string>;
  conns: number;
  accepted: number;
  refused: number;
  errors: number;
  rx_bytes: number;
  tx_bytes: number;
}

/** What keeps the metrics (metrics.ts Metrics): counters take increments, conns is read when scraped. */
export interface ProxyMetricsSink {
  /** Increments (`conns` is not used). */
  proxyCounted(delta: ListenerCounts): void;
  /** Register, once, the open-connection gauges, read from `read` at each scrape. */
  watchProxyConns(read: () => ListenerCounts[]): void;
}
