// A proxy's own Prometheus endpoint (`prometheus_bind_addr`): GET /metrics answers the proxy's
// connection metrics under the names the agent gives a managed proxy's (registry_proxy_…), plus the
// process's own runtime series — the agent's Metrics class, fed by this process's counts. For a
// proxy the agent does not run (a sidecar started by hand, `-service` mode), whose counts cannot
// join the agent's /v1/agent/metrics. Modelled on Consul's `envoy_prometheus_bind_addr`.
import { createServer, type Server } from 'node:http';
import { Metrics } from '../metrics/metrics';
import { defaultTelemetryConfig } from '../metrics/config';
import type { ProxyStats } from './connection-stats';
import type { ProxyLog } from './proxy-log';
import { ReportDeltas } from './proxy-metrics';

export class MetricsServer {
  private server: Server | undefined;
  private readonly metrics = new Metrics(defaultTelemetryConfig());
  private readonly deltas = new ReportDeltas();

  constructor(
    private readonly stats: ProxyStats,
    private readonly log: ProxyLog,
  ) {
    this.metrics.watchProxyConns(() => this.stats.all());
  }

  /** Listen on host:port; resolves with the port. */
  async start(addr: string): Promise<number> {
    const i = addr.lastIndexOf(':');
    const host = addr.slice(0, i).replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
    const port = Number(addr.slice(i + 1));
    if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Invalid prometheus_bind_addr ${JSON.stringify(addr)}: host:port expected`);
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics is served here\n');
        return;
      }
      // The counters catch up with the counts at each scrape.
      this.deltas.apply(this.stats.all(), this.metrics);
      this.metrics.prometheus().then(
        (text) => res.writeHead(200, { 'content-type': this.metrics.prometheusContentType }).end(text),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const bound = (server.address() as { port: number }).port;
    this.log.info('metrics listener started', { bind: `${host}:${bound}` });
    return bound;
  }

  close(): void {
    this.server?.close();
    this.server?.closeAllConnections();
  }
}
