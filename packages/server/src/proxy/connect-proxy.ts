// The built-in proxy (Consul's connect/proxy/proxy.go): follows its configuration, holds the
// service's TLS identity, and runs one public listener and one listener per upstream. A new
// configuration rebuilds only the listeners it changes; closing a listener stops new connections
// and leaves open ones to finish. The identity's changes reach the public listener at once.
import type { AgentApi } from './agent-api';
import type { ConfigSource } from './config-source';
import { ProxyStats } from './connection-stats';
import { MetricsServer } from './metrics-server';
import { MetricsReporter, type ProxyMetricsReport } from './proxy-metrics';
import type { ProxyConfig } from './proxy-config';
import type { ProxyLog } from './proxy-log';
import { PublicListener } from './public-listener';
import { TlsMaterial } from './tls-material';
import { UpstreamListener } from './upstream-listener';

const STATS_EVERY_MS = 60_000;

export interface ProxyMetricsOptions {
  /** Where the counts are reported (a managed proxy: its agent, over IPC). */
  report?: (r: ProxyMetricsReport) => Promise<void>;
  /** host:port for the proxy's own /metrics; overrides the configuration's `prometheus_bind_addr`. */
  prometheusBindAddr?: string;
}

export class ConnectProxy {
  readonly stats = new ProxyStats();
  private readonly reporter: MetricsReporter | undefined;
  private metricsServer: { addr: string; server: MetricsServer } | undefined;
  private material: TlsMaterial | undefined;
  private service = '';
  private publicListener: { key: string; l: PublicListener } | undefined;
  private readonly upstreams = new Map<string, UpstreamListener>();
  /** Configurations are applied one at a time, in order. */
  private applying: Promise<void> = Promise.resolve();
  private statsTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly api: AgentApi,
    private readonly source: ConfigSource,
    private readonly log: ProxyLog,
    private readonly metricsOptions: ProxyMetricsOptions = {},
  ) {
    if (metricsOptions.report) this.reporter = new MetricsReporter(this.stats, metricsOptions.report);
  }

  async start(): Promise<void> {
    let first: Promise<void> | undefined;
    await this.source.start((cfg) => {
      const next = this.applying.then(() => this.apply(cfg));
      this.applying = next.catch((err: Error) => this.log.error('applying the proxy configuration failed', { err: err.message }));
      first ??= next;
    });
    await first;
    this.reporter?.start();
    let last = '';
    this.statsTimer = setInterval(() => {
      const now = JSON.stringify(this.stats.totals());
      if (now !== last) this.log.info('connection counts', this.stats.totals());
      last = now;
    }, STATS_EVERY_MS);
    this.statsTimer.unref();
  }

  /** Stop, after a last report of the counts. */
  async stop(): Promise<void> {
    this.close();
    await this.reporter?.stop();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.statsTimer);
    this.metricsServer?.server.close();
    this.source.stop();
    this.material?.stop();
    this.publicListener?.l.close(true);
    for (const u of this.upstreams.values()) u.close(true);
    this.api.close();
    this.log.info('proxy stopped', this.stats.totals());
  }

  private async apply(cfg: ProxyConfig): Promise<void> {
    if (this.closed) return;
    if (cfg.service !== this.service || !this.material) {
      const material = new TlsMaterial(this.api, cfg.service, (msg, f) => this.log.debug(msg, f));
      try {
        await material.start();
      } catch (err) {
        // Its other blocking query may be running still: stop it, or the process would not exit.
        material.stop();
        throw err;
      }
      this.material?.stop();
      this.material = material;
      this.service = cfg.service;
      this.publicListener?.l.close(false);
      this.publicListener = undefined;
      material.onChange((id) => this.publicListener?.l.update(id));
    }
    const material = this.material;
    const pubKey = JSON.stringify([cfg.service, cfg.publicListener]);
    if (this.publicListener?.key !== pubKey) {
      this.publicListener?.l.close(false);
      this.publicListener = undefined;
      if (cfg.publicListener) {
        const l = new PublicListener(cfg.publicListener, cfg.service, this.api, this.stats.inbound(cfg.service), this.log);
        await l.start(material.current());
        this.publicListener = { key: pubKey, l };
      }
    }
    const wanted = new Map(cfg.upstreams.map((u) => [JSON.stringify(u), u]));
    for (const [key, l] of this.upstreams) {
      if (!wanted.has(key)) {
        l.close(false);
        this.upstreams.delete(key);
      }
    }
    for (const [key, u] of wanted) {
      if (this.upstreams.has(key)) continue;
      const l = new UpstreamListener(u, this.api, () => this.material!.current(), this.stats.upstream(cfg.service, u.destinationType, u.destinationName), this.log);
      await l.start();
      this.upstreams.set(key, l);
    }
    await this.exposeMetrics(this.metricsOptions.prometheusBindAddr || cfg.prometheusBindAddr || '');
  }

  /** Serve the counts at `addr` (none: ''), moving the listener when the address changes. */
  private async exposeMetrics(addr: string): Promise<void> {
    if ((this.metricsServer?.addr ?? '') === addr) return;
    this.metricsServer?.server.close();
    this.metricsServer = undefined;
    if (!addr) return;
    const server = new MetricsServer(this.stats, this.log);
    await server.start(addr);
    this.metricsServer = { addr, server };
  }
}
