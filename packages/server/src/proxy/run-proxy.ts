// `registry connect proxy`'s body, shared by the CLI command and the agent's managed proxies
// (proxy-main.ts): choose the configuration source as Consul's command does (-proxy-id, then
// -sidecar-for, then -service with its flags), start the proxy, and return a handle to stop it.
import { createLogger } from '../runtime/logger';
import { AgentApi } from './agent-api';
import { agentSource, proxyIdForSidecar, staticSource, type ConfigSource } from './config-source';
import { ConnectProxy, type ProxyMetricsOptions } from './connect-proxy';
import { publicListenerOf, upstreamFlag } from './proxy-config';
import { proxyLog } from './proxy-log';
import { RegisterMonitor } from './register-monitor';

export interface ProxyOptions {
  httpAddr: string;
  token?: string;
  proxyId?: string;
  sidecarFor?: string;
  service?: string;
  serviceAddr?: string;
  listen?: string;
  upstreams?: string[];
  register?: boolean;
  registerId?: string;
  logLevel?: string;
  logJson?: boolean;
  /** Where the connection counts go besides the log (proxy-metrics.ts). */
  metrics?: ProxyMetricsOptions;
  /** Lines for the user (Consul's "==> " UI lines), apart from the log. */
  say?: (line: string) => void;
}

export interface RunningProxy {
  proxy: ConnectProxy;
  stop(): Promise<void>;
}

/** Usage errors (exit 1 with the message) are thrown as Error before anything listens. */
export async function runProxy(o: ProxyOptions): Promise<RunningProxy> {
  const say = o.say ?? (() => undefined);
  const log = proxyLog(createLogger(o.logLevel ?? 'info', o.logJson ?? false));
  const api = new AgentApi(o.httpAddr, o.token);
  say('==> Connect proxy starting...');
  let source: ConfigSource;
  let proxyId = o.proxyId;
  if (!proxyId && o.sidecarFor) proxyId = await proxyIdForSidecar(api, o.sidecarFor);
  let listen: [string, number] | undefined;
  if (proxyId) {
    say('    Configuration mode: Agent API');
    if (o.sidecarFor) say(`        Sidecar for ID: ${o.sidecarFor}`);
    say(`              Proxy ID: ${proxyId}`);
    source = agentSource(api, proxyId, log);
  } else {
    if (!o.service) throw new Error('-service or -proxy-id must be specified so that proxy can configure itself.');
    say('    Configuration mode: Flags');
    say(`               Service: ${o.service}`);
    const upstreams = (o.upstreams ?? []).map(upstreamFlag).sort((a, b) => (a.destinationName < b.destinationName ? -1 : a.destinationName > b.destinationName ? 1 : 0));
    for (const u of upstreams) say(`              Upstream: ${u.destinationName} => ${u.localBindAddress}:${u.localBindPort}`);
    let publicListener = null;
    if (o.listen) {
      listen = listenParts(o.listen);
      if (!o.serviceAddr) throw new Error('-service-addr must be specified with -listen so the proxy knows the backend service address.');
      say(`       Public listener: ${listen[0]}:${listen[1]} => ${o.serviceAddr}`);
      publicListener = publicListenerOf(listen[0], listen[1], o.serviceAddr);
    } else say('       Public listener: Disabled');
    source = staticSource({ service: o.service, publicListener, upstreams });
  }
  if (o.register && (!o.service || !listen)) throw new Error('-register may only be specified with -service and -listen');
  const proxy = new ConnectProxy(api, source, log, o.metrics);
  try {
    await proxy.start();
  } catch (err) {
    proxy.close();
    throw err;
  }
  let monitor: RegisterMonitor | undefined;
  if (o.register && o.service && listen) {
    monitor = new RegisterMonitor(new AgentApi(o.httpAddr, o.token), o.service, listen[0], listen[1], o.registerId ?? '', log);
    await monitor.start();
  }
  say('');
  say('==> Log data will now stream in as it occurs:');
  return {
    proxy,
    async stop() {
      await monitor?.stop();
      await proxy.stop();
    },
  };
}

function listenParts(listen: string): [string, number] {
  const i = listen.lastIndexOf(':');
  const port = Number(listen.slice(i + 1));
  if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Invalid -listen ${JSON.stringify(listen)}: host:port expected`);
  return [listen.slice(0, i).replace(/^\[(.*)\]$/, '$1') || '0.0.0.0', port];
}
