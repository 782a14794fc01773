// The half of an agent both kinds share (Consul's Agent around its server or client delegate): this
// node's own services and checks (local/) with the syncer and maintenance, managed proxies, the
// Connect side, the config file's watches, the HTTP(S) and DNS listeners, reload, and the order the
// shared parts stop in. agent/agent.ts (a server) and agent/client-agent.ts (a client) each build
// their own half — Raft and the store, or the server link and the node mirror — and hand this one
// what differs: the catalog view, the write with the agent's authority, the routes' cluster side.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import type { TcpTransport } from '@registry/raft';
import type { Command, Store } from '@registry/store';
import type { AgentConfig } from '../config/config';
import type { AgentConnect } from '../connect/agent-connect';
import { ManagedProxies } from '../connect/managed-proxies';
import { followManagedProxies } from '../connect/managed-proxy-follower';
import { proxyTokensOf } from '../connect/proxy-tokens';
import { installDns } from '../dns/install';
import type { DnsRpc } from '../dns/lookups';
import type { DnsInterface } from '../dns/install';
import { createApp } from '../http/app';
import type { JsonEncoder } from '../http/json-encoder';
import type { SliceLane } from '../http/slice-lane';
import { softFileLimit, type ConnectionLimiter } from '../http/connection-limit';
import { createHttpServer, httpAddressOf, listenHttp, LISTEN_BACKLOG } from '../http/http-server';
import { withRequestLog } from '../http/request-log';
import { allRoutes } from '../http/routes';
import type { RouteDeps } from '../http/routes/deps';
import type { RemoteDatacenterExecutor } from '../queries/failover';
import type { AclResolver } from '../rpc/acl-resolver';
import type { WanRouteDeps } from '../areas/wan-route-deps';
import type { NodeView } from '../local/anti-entropy';
import { installLocalState } from '../local/install';
import type { LocalState } from '../local/local-state';
import type { Maintenance } from '../local/maintenance';
import type { Syncer } from '../local/syncer';
import { uiAssets } from '../ui/ui-assets';
import { installWatches } from '../watches/install';
import type { AgentWatches } from '../watches/agent-watches';
import type { BaseDeps } from './base-deps';
import { applyLiveLimits } from './live-limits';
import { ConfigReloader, type Reloadable, type ReloadResult, type ReloadTargets } from './reload';

/** What the agent kind gives the local state: where this node's catalog rows are, and how the agent writes. */
export interface LocalWiring {
  connect: AgentConnect;
  /** The catalog view's store: the replicated one on a server, the node mirror's on a client. */
  store: Store;
  /** This node's rows in the catalog, freshly read. */
  view(): Promise<NodeView>;
  /** A write with the agent's own authority. */
  apply(cmd: Command): Promise<unknown>;
  /** Catalog services of this node the agent does not hold but keeps (a server's `registry`). */
  keepService?: (id: string) => boolean;
}

/** What the agent kind gives the listeners. */
export interface ServeWiring {
  /** The routes' dependencies but the shared ones (connect, local, metrics, reload: filled in here). */
  routes: Omit<RouteDeps, 'connect' | 'local' | 'metrics' | 'reload'>;
  /** Other datacenters for the routes (a server's areas); none: this datacenter only. */
  wan?: WanRouteDeps;
  acl: AclResolver;
  /** HTTPS on ports.https and the web UI: served by a server agent. */
  https: boolean;
  ui: boolean;
  dns: { rpc: DnsRpc; remoteQueries?: RemoteDatacenterExecutor };
  /** Where large answers' slices take turns (on a server, with the store's first listing builds). */
  largeAnswerLane: SliceLane;
  /** The edge's JSON encoder (a server's shares the answers reused between reads: rpc/reused-reads.ts). */
  json?: JsonEncoder;
}

export class CommonAgent implements Reloadable {
  /** This agent's own services and checks (local/local-state.ts). */
  local: LocalState | undefined;
  /** Keeps them in the catalog: check results and anti-entropy (local/syncer.ts). */
  syncer: Syncer | undefined;
  maintenance: Maintenance | undefined;
  /** Managed proxies' processes, following the local state. */
  proxies: ManagedProxies | undefined;
  /** The Connect side: agent cache, leaf signer, CA duty. */
  connect: AgentConnect | undefined;
  /** The config file's watches (once the HTTP API listens). */
  watches: AgentWatches | undefined;
  /** The DNS interface (undefined when disabled or its default port was taken). */
  dns: DnsInterface | undefined;
  private http: Server | null = null;
  /** The HTTPS listener (ports.https), when configured. */
  private https: Server | null = null;
  /** Counts the connections of the HTTP and HTTPS servers together (one share of descriptors). */
  private httpLimiter: ConnectionLimiter | undefined;
  private stopFollowing: (() => void) | undefined;
  private readonly reloader: ConfigReloader;
  /** The configuration in force: the start's, then each reload's snapshot (agent/config-snapshot.ts). */
  private current: Readonly<AgentConfig>;

  constructor(
    readonly base: BaseDeps,
    /** The server port, whose limits a reload changes (a transport given by a test may be none). */
    private readonly serverPort: TcpTransport | undefined,
    loadConfig: (() => AgentConfig) | undefined,
    /** The agent kind's parts a reload changes (its node facts; a server's snapshots). */
    private readonly kindTargets: () => Pick<ReloadTargets, 'nodeMeta' | 'snapshots'>,
  ) {
    this.current = base.config;
    this.reloader = new ConfigReloader(this, loadConfig);
  }

  get config(): Readonly<AgentConfig> {
    return this.current;
  }

  adopt(next: Readonly<AgentConfig>): void {
    this.current = next;
  }

  /** Every part a reload changes, for agent/reload.ts `reloadParts`. */
  reloadTargets(): ReloadTargets {
    return {
      logger: this.base.logger,
      tokens: this.base.tokens,
      metrics: this.base.metrics,
      dns: this.dns,
      listeners: { applyLimits: (config) => this.applyLimits(config) },
      watches: this.watches,
      local: this.local,
      ...this.kindTargets(),
    };
  }

  get logger() {
    return this.base.logger;
  }

  get dataDir(): string {
    return this.base.dataDir;
  }

  /**
   * The local state, built alike on both agent kinds (local/install.ts), with the managed proxies
   * that follow it; they start once the HTTP API they are given listens (`serve`).
   */
  async startLocal(w: LocalWiring): Promise<void> {
    const { config, dataDir, logger, failures, metrics } = this.base;
    this.connect = w.connect;
    const { local, syncer, maintenance } = await installLocalState({
      config, dataDir, store: w.store, view: w.view, apply: w.apply,
      nodeChecks: (node, minIndex, signal) => w.connect.nodeChecks(node, minIndex, signal),
      keepService: w.keepService,
      logger: logger.child({ module: 'agent.checks' }),
      syncLogger: logger.child({ module: 'agent.anti_entropy' }),
      failures,
    });
    this.local = local;
    this.syncer = syncer;
    this.maintenance = maintenance;
    const proxies = new ManagedProxies(() => this.httpAddress, logger.child({ module: 'agent.connect' }), failures);
    proxies.hold();
    proxies.reportTo(metrics);
    this.proxies = proxies;
    this.stopFollowing = followManagedProxies(local, proxies);
  }

  /**
   * Anti-entropy passes, once the loaded services and checks are in the catalog (local.restored):
   * each service is written with its checks, so no pass writes a service alone — for a moment a
   * service with no checks would pass every health read — nor removes what is about to come back.
   */
  startSyncer(stopping: () => boolean): void {
    const { local, syncer } = this;
    void local!.restored.then(() => {
      if (!stopping()) syncer!.start(this.config.clients.antiEntropyIntervalMs);
    });
  }

  /** The HTTP API (and HTTPS), then what needs it listening: managed proxies, watches; then DNS. */
  async serve(s: ServeWiring): Promise<void> {
    const { config, logger, metrics, failures, tls } = this.base;
    const deps: RouteDeps = { ...s.routes, connect: this.connect!, local: this.local!, metrics, reload: () => this.reload() };
    const app = createApp(allRoutes(deps, s.wan), {
      datacenter: config.datacenter,
      defaultToken: () => config.acl.tokens.default,
      acl: s.acl,
      proxyTokens: proxyTokensOf(() => this.local, () => config.acl.tokens.default),
      logger: logger.child({ module: 'agent.http' }),
      consulCompat: config.consulCompat,
      translateAddresses: config.translateWanAddrs,
      metrics,
      ui: s.ui ? this.webUi() : undefined,
      json: s.json,
      largeAnswerLane: s.largeAnswerLane,
    });
    // Bounded receive timeouts (blocking waits come after the request is read and are not cut),
    // idle keep-alive, and a cap on open connections below the descriptor limit (docs/http.md).
    const httpLogger = logger.child({ module: 'agent.http' });
    const refused = (reason: string) => metrics.httpRefused(reason);
    const { server, limits, limiter } = createHttpServer(withRequestLog(app, httpLogger), config.http, httpLogger, undefined, refused);
    this.httpLimiter = limiter;
    httpLogger.info({ maxConns: limits.maxConns, maxConnsPerClient: limits.maxConnsPerClient }, 'http connection limits');
    // TCP, or a unix socket with addresses.http = "unix:///path".
    await listenHttp(server, config);
    this.http = server;
    if (s.https && tls.https) {
      // HTTPS counts against the same caps (one limiter): both ports together hold HTTP's share.
      const { server: https } = createHttpServer(withRequestLog(app, httpLogger), config.http, httpLogger, tls.https, refused, limiter);
      await new Promise<void>((resolve, reject) => {
        https.once('error', reject);
        https.listen({ port: config.tls.httpsPort, host: config.client, backlog: LISTEN_BACKLOG }, () => {
          https.off('error', reject);
          resolve();
        });
      });
      this.https = https;
    }
    this.proxies!.release();
    // Watches query this agent's HTTP API, so they start once it listens.
    this.watches = installWatches({ config, httpAddress: () => this.httpAddress, failures, logger: logger.child({ module: 'agent.watches' }) });
    this.dns = await installDns({
      rpc: s.dns.rpc, config: config.dns, port: config.dnsPort, portSet: config.dnsPortSet, host: config.client, datacenter: config.datacenter,
      nodeName: config.nodeName, translateWanAddrs: config.translateWanAddrs, defaultToken: () => config.acl.tokens.default,
      remoteQueries: s.dns.remoteQueries, logger: logger.child({ module: 'agent.dns' }),
      fileLimit: softFileLimit(), observer: metrics.dnsObserver,
    });
  }

  /** The web UI's folders when `ui` is on (docs/ui.md); a bundle that was not built is logged, not fatal. */
  private webUi(): { dirs: string[] } | undefined {
    if (!this.config.ui) return undefined;
    const assets = uiAssets(this.config.uiDir);
    if (assets.problem) this.logger.warn({ problem: assets.problem }, 'web UI not available');
    return { dirs: assets.dirs };
  }

  get httpAddress(): string {
    return httpAddressOf(this.http);
  }

  /** 0 when not listening, or listening on a unix socket. */
  get httpPort(): number {
    const a = this.http?.address();
    return a && typeof a !== 'string' ? a.port : 0;
  }

  /** The HTTPS port, 0 when HTTPS is not served. */
  get httpsPort(): number {
    return (this.https?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** The DNS port (UDP and TCP), 0 when DNS is not served. */
  get dnsPort(): number {
    return this.dns?.server.port ?? 0;
  }

  /**
   * Re-read the configuration and apply what can change at run time (agent/reload.ts). An invalid
   * configuration throws (ConfigError) and leaves the running one untouched. Reloads run one at a time.
   */
  reload(): Promise<ReloadResult> {
    return this.reloader.reload();
  }

  /** A reload changed limits: every listener takes `config`'s (agent/live-limits.ts). */
  private applyLimits(config: Readonly<AgentConfig>): void {
    const servers = [this.http, this.https].filter((s): s is Server => s !== null);
    applyLiveLimits(
      { http: this.httpLimiter ? { servers, limiter: this.httpLimiter } : undefined, serverPort: this.serverPort, dns: this.dns?.server },
      config,
      this.logger.child({ module: 'agent' }),
    );
  }

  /** Stops the shared parts' work: watches, the syncer, managed proxies' following, check runners, maintenance, Connect, metrics. */
  stopWork(): void {
    this.watches?.stop();
    this.syncer?.stop();
    this.stopFollowing?.();
    this.local?.stop();
    this.maintenance?.stop();
    this.connect?.stop();
    this.base.metrics.stop();
  }

  /** Closes DNS, then HTTP(S) with their open connections. */
  async closeListeners(): Promise<void> {
    await this.dns?.server.close();
    for (const http of [this.http, this.https]) {
      if (!http) continue;
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    }
  }

  /** Last: a `-dev` agent's temporary data dir goes. */
  async finish(): Promise<void> {
    if (this.base.tempDataDir) await rm(this.base.dataDir, { recursive: true, force: true });
    this.logger.info('agent stopped');
  }
}
