// The process a managed proxy with no Command runs (as Consul 1.4 runs `consul connect proxy` for
// it): the agent gives the proxy's ID, its token and the HTTP address in the environment.
import type { ProxyMetricsReport } from './proxy-metrics';
import { runProxy } from './run-proxy';

/** The agent opened an IPC channel for the counts (connect/managed-proxies.ts); it does not keep this process alive. */
function ipcReport(): ((r: ProxyMetricsReport) => Promise<void>) | undefined {
  if (!process.send) return undefined;
  process.channel?.unref();
  return (r) =>
    new Promise((resolve) => {
      if (!process.connected) return resolve();
      process.send!(r, undefined, undefined, () => resolve());
    });
}

async function main(): Promise<void> {
  const env = process.env;
  const running = await runProxy({
    httpAddr: env.REGISTRY_HTTP_ADDR || '127.0.0.1:8500',
    token: env.REGISTRY_PROXY_TOKEN || env.REGISTRY_HTTP_TOKEN || undefined,
    proxyId: env.REGISTRY_PROXY_ID,
    logLevel: env.REGISTRY_PROXY_LOG_LEVEL || 'info',
    metrics: { report: ipcReport() },
  });
  const stop = () => void running.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: Error) => {
  process.stderr.write(`Failed running proxy: ${err.message}\n`);
  process.exit(1);
});
