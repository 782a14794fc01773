// Wiring of the DNS interface into an agent: lookups through the agent's RPC layer, the handler,
// and the UDP+TCP sockets on `ports.dns` (bound to the client address, as the HTTP API).
// -1 disables it. The default port (8600) is best-effort: when it is taken the agent says so and
// runs without DNS; a port that was asked for (flag or config file) must bind or the agent fails.
import type { Logger } from '../runtime/logger';
import type { RemoteDatacenterExecutor } from '../queries/failover';
import type { DnsConfig } from './config';
import { DnsHandler } from './handler';
import { resolveDnsLimits } from './limits';
import { Lookups, type DnsRpc } from './lookups';
import type { DnsObserver } from './observer';
import { DnsServer } from './server';

export interface DnsDeps {
  rpc: DnsRpc;
  config: DnsConfig;
  /** `ports.dns`: -1 disables, 0 picks a free port. */
  port: number;
  /** Whether the port was configured rather than defaulted. */
  portSet: boolean;
  host: string;
  datacenter: string;
  nodeName: string;
  translateWanAddrs: boolean;
  defaultToken: () => string | undefined;
  remoteQueries?: RemoteDatacenterExecutor;
  logger: Logger;
  /** The soft RLIMIT_NOFILE, when known: the default connection caps are a share of it (dns/limits.ts). */
  fileLimit: number | undefined;
  /** Refusals, timeouts and shed queries are counted here (the agent's metrics). */
  observer?: DnsObserver;
}

/** The running DNS interface: its sockets, and the settings a reload changes. */
export interface DnsInterface {
  server: DnsServer;
  /** A reload's `dns_config` (agent/reload.ts); its limits go to `server.setLimits`. */
  reload(config: DnsConfig): void;
}

export async function installDns(d: DnsDeps): Promise<DnsInterface | undefined> {
  if (d.port < 0) return undefined;
  const lookups = new Lookups({
    rpc: d.rpc,
    config: d.config,
    datacenter: d.datacenter,
    nodeName: d.nodeName,
    token: d.defaultToken,
    remoteQueries: d.remoteQueries,
    onFailoverError: (dc, err) => d.logger.warn({ dc, err: (err as Error).message }, 'dns: prepared query failover failed'),
  });
  const handler = new DnsHandler(lookups, d.config, d.datacenter, d.translateWanAddrs, d.logger);
  const limits = resolveDnsLimits(d.config.limits, d.fileLimit);
  try {
    const server = await DnsServer.listen({
      host: d.host,
      port: d.port,
      respond: (req, network, ip) => handler.respond(req, network, ip),
      limits,
      observer: d.observer,
      logger: d.logger,
      onError: (err) => d.logger.warn({ err: err.message }, 'dns: socket error'),
    });
    d.logger.info({ dns: server.address, domain: d.config.domain, limits }, 'dns interface listening');
    return { server, reload: (config) => handler.reload(config) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!d.portSet && (code === 'EADDRINUSE' || code === 'EACCES')) {
      d.logger.warn({ port: d.port, err: (err as Error).message }, 'dns: default port unavailable, running without the DNS interface (set ports.dns or -dns-port)');
      return undefined;
    }
    throw new Error(`cannot listen for DNS on ${d.host}:${d.port}: ${(err as Error).message}`);
  }
}
