// The process a managed proxy with no Command runs (as Consul 1.4 runs `consul connect proxy` for
// it): the agent gives the proxy's ID, its token and the HTTP address in the environment.
import { runProxy } from './run-proxy';

async function main(): Promise<void> {
  const env = process.env;
  const running = await runProxy({
    httpAddr: env.REGISTRY_HTTP_ADDR || '127.0.0.1:8500',
    token: env.REGISTRY_PROXY_TOKEN || env.REGISTRY_HTTP_TOKEN || undefined,
    proxyId: env.REGISTRY_PROXY_ID,
    logLevel: env.REGISTRY_PROXY_LOG_LEVEL || 'info',
  });
  const stop = () => void running.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: Error) => {
  process.stderr.write(`Failed running proxy: ${err.message}\n`);
  process.exit(1);
});
