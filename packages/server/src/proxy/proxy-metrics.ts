// How a proxy's counts (connection-stats.ts) reach metrics. The proxy reports its cumulative counts
// about once a second while they change; whoever keeps the metrics turns successive reports of one
// proxy process into increments of its own counters (ReportDeltas), so that the counters stay
// monotonic across proxy restarts and the JSON form's interval sums are right.
// - A managed proxy the agent runs reports over the IPC channel the agent opened for it
//   (connect/managed-proxies.ts): its counts join the agent's /v1/agent/metrics.
// - Any proxy with `prometheus_bind_addr` (proxy Config, or -prometheus-bind-addr) also serves its
//   own counts in Prometheus text at http://<addr>/metrics (metrics-server.ts), under the same names.
import type { ListenerCounts, ListenerKind, ProxyStats } from './connection-stats';
import type { ProxyMetricsSink } from '../metrics/proxy-counts';

export const REPORT_TYPE = 'registry.proxy.metrics';

/** The IPC message a managed proxy sends its agent. */
export interface ProxyMetricsReport {
  type: typeof REPORT_TYPE;
  listeners: ListenerCounts[];
}

export type { ProxyMetricsSink } from '../metrics/proxy-counts';

const LABELS: Record<ListenerKind, readonly string[]> = { inbound: ['dst'], upstream: ['src', 'dst_type', 'dst'] };
const COUNTS = ['conns', 'accepted', 'refused', 'errors', 'rx_bytes', 'tx_bytes'] as const;

/** A report from a child process, checked field by field (null: not one). */
export function reportOf(msg: unknown): ProxyMetricsReport | null {
  if (typeof msg !== 'object' || msg === null) return null;
  const m = msg as Record<string, unknown>;
  if (m.type !== REPORT_TYPE || !Array.isArray(m.listeners) || m.listeners.length > 1000) return null;
  const listeners: ListenerCounts[] = [];
  for (const raw of m.listeners as unknown[]) {
    if (typeof raw !== 'object' || raw === null) return null;
    const l = raw as Record<string, unknown>;
    const kind = l.kind;
    if (kind !== 'inbound' && kind !== 'upstream') return null;
    const labelsIn = (typeof l.labels === 'object' && l.labels !== null ? l.labels : {}) as Record<string, unknown>;
    const labels: Record<string, string> = {};
    for (const name of LABELS[kind]) {
      const v = labelsIn[name];
      if (typeof v !== 'string') return null;
      labels[name] = v;
    }
    const out = { kind, labels } as ListenerCounts;
    for (const c of COUNTS) {
      const v = l[c];
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return null;
      out[c] = v;
    }
    listeners.push(out);
  }
  return { type: REPORT_TYPE, listeners };
}

/** Successive cumulative reports of ONE proxy process → increments for a sink; the latest for the gauges. */
export class ReportDeltas {
  private readonly prev = new Map<string, ListenerCounts>();
  latest: ListenerCounts[] = [];

  apply(listeners: ListenerCounts[], sink: ProxyMetricsSink): void {
    this.latest = listeners;
    for (const l of listeners) {
      const key = `${l.kind}\u0001${Object.values(l.labels).join('\u0001')}`;
      const p = this.prev.get(key);
      this.prev.set(key, l);
      const d = { ...l };
      let any = false;
      for (const c of COUNTS) {
        if (c === 'conns') continue;
        d[c] = Math.max(0, l[c] - (p?.[c] ?? 0));
        if (d[c] > 0) any = true;
      }
      // A listener's first report makes its series exist (at 0) even before traffic.
      if (any || !p) sink.proxyCounted(d);
    }
  }
}

const REPORT_EVERY_MS = 1000;

/** In the proxy process: send the counts when they changed, once a second and at the end. */
export class MetricsReporter {
  private timer: NodeJS.Timeout | undefined;
  private last = '';

  constructor(
    private readonly stats: ProxyStats,
    private readonly send: (report: ProxyMetricsReport) => Promise<void>,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), REPORT_EVERY_MS);
    this.timer.unref();
  }

  /** Send now if anything changed since the last report. */
  async flush(): Promise<void> {
    const listeners = this.stats.all();
    const text = JSON.stringify(listeners);
    if (text === this.last) return;
    this.last = text;
    await this.send({ type: REPORT_TYPE, listeners }).catch(() => undefined);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
