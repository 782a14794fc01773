// A client agent (Consul's agent without -server): no Raft and no replicated store. It reaches the
// datacenter through a server's RPC port, heartbeats so the servers keep its node and serfHealth
// check, owns its services and checks (agent endpoints, config definitions, the check runners) and
// keeps them in the catalog by anti-entropy (local/, built as on a server, over the node mirror);
// every other request is forwarded to a live server through ForwardingRpc, the same RpcApi the HTTP
// routes use on a server. `?cached` and the agent cache are served here (cache/agent-cache.ts,
// through AgentConnect). docs/cluster.md "Client agents".
import { mkdtemp, rm } from 'node:fs/promises';
import { makeDirDurably } from '../runtime/durable-file';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TcpTransport } from '@registry/raft';
import type { Command } from '@registry/store';
import type { AgentConfig } from '../config/config';
import { createApp } from '../http/app';
import { createHttpServer, httpAddressOf, listenHttp } from '../http/http-server';
import { withRequestLog } from '../http/request-log';
import { softFileLimit } from '../http/connection-limit';
import type { AgentLifecycle, RouteDeps } from '../http/routes/deps';
import { allRoutes } from '../http/routes';
import { badRequest } from '../errors';
import { allowAllResolver, type AclResolver } from '../rpc/acl-resolver';
import { CachedAclResolver } from '../acl/cached-resolver';
import { withAgentMaster } from '../acl/agent-master';
import { AgentConnect } from '../connect/agent-connect';
import { initialCa } from '../config/connect-config';
import { ManagedProxies } from '../connect/managed-proxies';
import { followManagedProxies } from '../connect/managed-proxy-follower';
import type { LocalState } from '../local/local-state';
import type { Maintenance } from '../local/maintenance';
import type { Syncer } from '../local/syncer';
import { installLocalState } from '../local/install';
import { proxyTokensOf } from '../connect/proxy-tokens';
import { AgentTokens } from '../acl/agent-tokens';
import { installDns } from '../dns/install';
import type { DnsServer } from '../dns/server';
import type { DnsRpc } from '../dns/lookups';
import { Metrics } from '../metrics/metrics';
import { loadAgentTls } from '../tls/tls-files';
import { ForwardingRpc } from '../client/forwarding-rpc';
import { ServerLink } from '../client/server-link';
import { Heartbeats } from '../client/heartbeats';
import { NodeMirror } from '../client/node-mirror';
import { tokenFetcher } from '../client/token-fetch';
import { clientClusterOps, clientForceLeave } from './client-cluster-ops';
import { addLogSecret, createLogger, type Logger } from '../runtime/logger';
import { loadOrCreateNodeId } from './node-id';
import { checkDataFormat } from './data-format';
import { runnerFailures } from '../runtime/runner-failures';
import { serverPortLimits, ServerPortRefusals } from './server-port-limits';
import { LogTap } from '../runtime/log-tap';
import { hostFacts } from './host-facts';
import { debugConfig } from './debug-config';
import { advertiseHost } from './advertise-address';
import { hostOf } from '../cluster/server-info';
import type { BannerFacts } from './banner';
import { ConfigReloader, type ReloadResult } from './reload';
import { applyLiveLimits } from './live-limits';
import type { ConnectionLimiter } from '../http/connection-limit';
import { VERSION, type AgentOptions } from './agent';
import { monotonicMs } from '../time';
import { installWatches } from '../watches/install';
import type { AgentWatches } from '../watches/agent-watches';
import { largeAnswerDuty, SliceLane } from '../http/slice-lane';

export class ClientAgent {
  private http: Server | null = null;
  private dns: DnsServer | undefined;
  private httpLimiter: ConnectionLimiter | undefined;
  private stopping: Promise<void> | null = null;
  readonly stopped: Promise<void>;
  /** The process's exit status once stopped: 0, or 1 after a stop on purpose for a fault (docs/operations.md, "What ends the process"). */
  exitCode = 0;
  private markStopped!: () => void;
  /** This agent's own services and checks (local/local-state.ts). */
  local: LocalState | undefined;
  /** The Connect side: agent cache, leaves (connect/agent-connect.ts). */
  connect: AgentConnect | undefined;
  /** Managed proxies' processes, following the local state. */
  proxies: ManagedProxies | undefined;
  maintenance: Maintenance | undefined;
  /** Keeps this node's services and checks in the catalog: check results and anti-entropy (local/syncer.ts). */
  syncer: Syncer | undefined;
  private stopFollowing: (() => void) | undefined;
  metrics: Metrics | undefined;
  watches: AgentWatches | undefined;

  private constructor(
    readonly config: AgentConfig,
    readonly logger: Logger,
    readonly nodeId: string,
    readonly dataDir: string,
    private readonly tempDataDir: boolean,
    private readonly transport: TcpTransport,
    readonly link: ServerLink,
    readonly rpc: ForwardingRpc,
    readonly mirror: NodeMirror,
    private readonly logTap: LogTap,
  ) {
    this.stopped = new Promise((resolve) => (this.markStopped = resolve));
  }

  private reloader: ConfigReloader | undefined;

  static async start(config: AgentConfig, options: AgentOptions = {}): Promise<ClientAgent> {
    const made: { agent?: ClientAgent; tempDir?: string } = {};
    try {
      return await ClientAgent.boot(config, options, made);
    } catch (err) {
      await made.agent?.stop().catch(() => undefined);
      if (made.tempDir) await rm(made.tempDir, { recursive: true, force: true });
      throw err;
    }
  }

  private heartbeats!: Heartbeats;

  /** The host this client advertises (its catalog node's address), resolved at start. */
  private get advertise(): string {
    return hostOf(this.transport.address);
  }

  private static async boot(config: AgentConfig, options: AgentOptions, made: { agent?: ClientAgent; tempDir?: string }): Promise<ClientAgent> {
    const logTap = new LogTap();
    const logger = options.logger ?? createLogger(config.logLevel, config.logJson, logTap.destination);
    for (const token of Object.values(config.acl.tokens)) addLogSecret(token);
    const tempDataDir = !config.dataDir;
    const dataDir = config.dataDir ?? (made.tempDir = await mkdtemp(join(tmpdir(), 'registry-client-')));
    // Durably: a data dir whose own name a power cut takes is a first start again (issue 35).
    await makeDirDurably(dataDir);
    // Before anything in the data dir is read: a newer format is refused untouched (agent/data-format.ts).
    await checkDataFormat(dataDir, VERSION);
    const nodeId = await loadOrCreateNodeId(dataDir, config.nodeId);
    const tls = await loadAgentTls(config.tls, config.datacenter);
    // A client serves nothing on the RPC port; it only dials servers (an ephemeral port, so any
    // number of clients and a server can share a host).
    // Its heartbeats name it by the address others reach it by (agent/advertise-address.ts), and its
    // listener is bounded as a server's is (limits.rpc_*): nothing on it may cost more.
    const advertise = advertiseHost(config);
    const transport = await TcpTransport.listen({ host: config.bind, advertise, port: 0, tls: tls.rpc, inbound: serverPortLimits(config.rpc), inboundObserver: new ServerPortRefusals(logger.child({ module: 'agent.client.rpc' }), () => undefined) });
    const link = new ServerLink(transport, config.retryJoin);
    const rpc = new ForwardingRpc(link, clientAclResolver(config, link, logger.child({ module: 'agent.acl' })));
    // The agent's own reads and writes of its node (anti-entropy, the mirror, service and check
    // sync, maintenance) go with its agent token, as Consul's acl_agent_token (else acl_token): the
    // servers check them like any other (cluster/client-gateway.ts no longer trusts `internal`).
    const agentToken = () => agentTokenOf(config);
    const mirror = new NodeMirror(rpc, config.nodeName, config.datacenter, agentToken);
    const agent = new ClientAgent(config, logger, nodeId, dataDir, tempDataDir, transport, link, rpc, mirror, logTap);
    made.agent = agent;
    agent.reloader = new ConfigReloader(agent, options.loadConfig);
    const metrics = new Metrics(config.telemetry);
    agent.metrics = metrics;
    agent.metrics.start();
    const failures = runnerFailures(logger.child({ module: 'agent.runners' }), (runner) => metrics.runnerFailed(runner));

    // The agent's own writes (its services, checks, their results, maintenance, anti-entropy) go
    // with its authority; the mirror follows them. `internal` still counts with servers that have
    // ACLs off (nothing is checked there anyway).
    const apply = async (cmd: Command) => {
      const result = await rpc.apply(cmd, { internal: true, token: agentToken() });
      agent.mirrorSoon();
      return result;
    };
    // Its leader calls (Connect.Sign of a leaf for a service of this agent, refreshed in the
    // background, not per request) are the agent's own too: its agent token, which the servers check.
    const connect = new AgentConnect({ config, initialCa: initialCa(config), rpc, store: mirror.store, logger: logger.child({ module: 'agent.connect' }), agentToken, lostContactSince: () => agent.heartbeats?.lostSince });
    agent.connect = connect;
    // Built as on a server (local/install.ts); the catalog view is the node mirror.
    const { local, syncer, maintenance } = await installLocalState({
      config, dataDir, store: mirror.store,
      view: () => mirror.refresh(),
      apply,
      nodeChecks: (node, minIndex, signal) => connect.nodeChecks(node, minIndex, signal),
      logger: logger.child({ module: 'agent.checks' }),
      syncLogger: logger.child({ module: 'agent.anti_entropy' }),
      failures,
    });
    agent.local = local;
    agent.syncer = syncer;
    agent.maintenance = maintenance;
    // Managed proxies follow the local state; they start once the HTTP API they are given listens.
    const proxies = new ManagedProxies(() => agent.httpAddress, logger.child({ module: 'agent.connect' }), failures);
    proxies.hold();
    proxies.reportTo(metrics);
    agent.proxies = proxies;
    agent.stopFollowing = followManagedProxies(local, proxies);

    agent.heartbeats = new Heartbeats(link, { id: nodeId, node: config.nodeName, address: advertise, port: config.httpPort, nodeMeta: config.nodeMeta }, logger.child({ module: 'agent.client' }), () => {
      void mirror.refresh().catch(() => undefined);
      // As on a server: the first pass waits until the loaded services and checks are in the
      // catalog (local.restored), each service written with its checks, so no pass writes a
      // service alone — for a moment a service with no checks would pass every health read.
      void local.restored.then(() => {
        if (!agent.stopping) syncer.start(config.clients.antiEntropyIntervalMs);
      });
    });
    agent.heartbeats.start();

    await agent.listenHttp();
    proxies.release();
    // Watches query this agent's HTTP API, so they start once it listens.
    agent.watches = installWatches({ config, httpAddress: () => agent.httpAddress, failures, logger: logger.child({ module: 'agent.watches' }) });
    agent.dns = await installDns({
      rpc: dnsRpc(rpc), config: config.dns, port: config.dnsPort, portSet: config.dnsPortSet, host: config.client, datacenter: config.datacenter,
      nodeName: config.nodeName, translateWanAddrs: config.translateWanAddrs, defaultToken: () => config.acl.tokens.default,
      logger: logger.child({ module: 'agent.dns' }),
      fileLimit: softFileLimit(), observer: agent.metrics.dnsObserver,
    });
    logger.info({ node: config.nodeName, id: nodeId, datacenter: config.datacenter, http: agent.httpAddress, servers: config.retryJoin, mode: 'client' }, 'registry agent running');
    return agent;
  }

  get httpAddress(): string {
    return httpAddressOf(this.http);
  }

  /** What `registry agent` prints once running (agent/banner.ts). */
  bannerFacts(): BannerFacts {
    return { version: VERSION, nodeId: this.nodeId, config: this.config, httpPort: this.httpPort, httpsPort: -1, dnsPort: this.dns?.port ?? 0, clusterAddress: `${this.advertise}:${this.httpPort}` };
  }

  get httpPort(): number {
    const a = this.http?.address();
    return a && typeof a !== 'string' ? a.port : 0;
  }

  /** SIGHUP, PUT /v1/agent/reload: what a server's reload applies (agent/reload.ts), on this client. */
  reload(): Promise<ReloadResult> {
    return this.reloader!.reload();
  }

  /** A reload changed limits: every listener takes the running config's (agent/live-limits.ts). */
  applyLimits(): void {
    applyLiveLimits(
      { http: this.http && this.httpLimiter ? { servers: [this.http], limiter: this.httpLimiter } : undefined, serverPort: this.transport, dns: this.dns },
      this.config,
      this.logger.child({ module: 'agent' }),
    );
  }

  stop(_options: { transfer?: boolean } = {}): Promise<void> {
    if (!this.stopping) this.stopping = this.shutdown();
    return this.stopping;
  }

  private mirrorTimer: NodeJS.Timeout | null = null;

  /** Refresh the node mirror shortly after the agent's own writes (coalesced). */
  private mirrorSoon(): void {
    if (this.mirrorTimer || this.stopping) return;
    this.mirrorTimer = setTimeout(() => {
      this.mirrorTimer = null;
      void this.mirror.refresh().catch(() => undefined);
    }, 50);
  }

  private async shutdown(): Promise<void> {
    this.watches?.stop();
    this.heartbeats?.stop();
    this.syncer?.stop();
    if (this.mirrorTimer) clearTimeout(this.mirrorTimer);
    this.stopFollowing?.();
    this.local?.stop();
    this.maintenance?.stop();
    this.connect?.stop();
    this.metrics?.stop();
    await this.dns?.close();
    if (this.http) {
      const http = this.http;
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    }
    await this.transport.close();
    if (this.tempDataDir) await rm(this.dataDir, { recursive: true, force: true });
    this.logger.info('agent stopped');
    this.markStopped();
  }

  /** Leave: no more heartbeats, the leader deregisters this node (listed as left), then stop. */
  private async leave(): Promise<void> {
    this.heartbeats.stop();
    this.syncer?.stopPasses();
    // The client's own operation: its agent token, which holds node:write on its node.
    await this.rpc.leader.call('Cluster.ClientLeave', { node: this.config.nodeName }, undefined, agentTokenOf(this.config));
    setTimeout(() => void this.stop(), 50);
  }

  private lifecycle(): AgentLifecycle {
    const tokens = new AgentTokens(this.config.acl.tokens, this.config.acl.enableTokenPersistence ? this.dataDir : undefined);
    void tokens.load();
    return {
      tokens,
      maintenance: this.maintenance!,
      monitor: (minRank, listener) => this.logTap.attach(minRank, listener),
      host: () => hostFacts(this.dataDir),
      forceLeave: (node, token) => clientForceLeave(this.rpc, node, token),
      wanMembers: () => [],
      wanJoin: async () => {
        throw badRequest('WAN join is done on servers: this is a client agent');
      },
    };
  }

  private async listenHttp(): Promise<void> {
    const config = this.config;
    const deps: RouteDeps = {
      rpc: this.rpc,
      agent: { nodeName: config.nodeName, nodeId: this.nodeId, datacenter: config.datacenter, primaryDatacenter: config.primaryDatacenter, consulCompat: config.consulCompat },
      cluster: clientClusterOps({
        link: this.link,
        rpc: this.rpc,
        heartbeats: this.heartbeats,
        node: config.nodeName,
        leave: () => this.leave(),
        self: () => ({
          Config: { Datacenter: config.datacenter, NodeName: config.nodeName, NodeID: this.nodeId, Server: false, Version: VERSION },
          Member: {
            Name: config.nodeName, Addr: this.advertise, Port: this.httpPort,
            Tags: { role: 'node', dc: config.datacenter, id: this.nodeId, vsn: '2', build: VERSION }, Status: 1,
          },
          Coord: null,
          DebugConfig: debugConfig(config, this.nodeId, this.advertise, this.httpPort),
          Stats: { agent: { server: this.link.current, servers: this.link.known.join(',') }, antiEntropy: this.syncer?.stats ?? { passes: 0, writes: 0, blocked: 0 } },
        }),
      }),
      connect: this.connect!,
      local: this.local!,
      sessions: { ttlMinMs: config.sessionTtlMinMs, renew: (id: string, token?: string) => this.rpc.leader.call('Session.Renew', { id }, undefined, token) },
      metrics: this.metrics,
      lifecycle: this.lifecycle(),
      reload: () => this.reload(),
    };
    const logger = this.logger.child({ module: 'agent.http' });
    const app = createApp(allRoutes(deps), { datacenter: config.datacenter, defaultToken: () => config.acl.tokens.default, acl: this.rpc.aclResolver, proxyTokens: proxyTokensOf(() => this.local, () => config.acl.tokens.default), logger, consulCompat: config.consulCompat, translateAddresses: config.translateWanAddrs, metrics: this.metrics, largeAnswerLane: new SliceLane(largeAnswerDuty(process.env.REGISTRY_LARGE_ANSWER_DUTY)) });
    const { server, limiter } = createHttpServer(withRequestLog(app, logger), config.http, logger, undefined, (reason) => this.metrics?.httpRefused(reason));
    await listenHttp(server, config);
    this.http = server;
    this.httpLimiter = limiter;
  }
}

/**
 * With `acl.enabled`, tokens are resolved by asking the servers and kept for `acl.token_ttl`
 * (acl/cached-resolver.ts); the agent master token is this agent's own and never leaves it.
 */
function clientAclResolver(config: AgentConfig, link: ServerLink, logger: Logger): AclResolver {
  if (!config.acl.enabled) return allowAllResolver;
  let lastWarned = -Infinity; // monotonic: the first warning is never held back
  const servers = new CachedAclResolver({
    datacenter: config.datacenter,
    defaultPolicy: config.acl.defaultPolicy,
    downPolicy: () => config.acl.downPolicy,
    tokenTtlMs: () => config.acl.tokenTtlMs,
    fetch: tokenFetcher(link, config.datacenter, config.primaryDatacenter ?? config.datacenter),
    onDown: (err, policy) => {
      // Once per 10 s at most: under load every request with an unknown or expired token gets here.
      if (monotonicMs() - lastWarned < 10_000) return;
      lastWarned = monotonicMs();
      logger.warn({ err: err.message, down_policy: policy }, 'no server could resolve an ACL token; the down policy answers');
    },
  });
  return withAgentMaster(servers, config.nodeName, () => config.acl.tokens.agentMaster);
}

/**
 * DNS resolves a prepared query's own token after reading the query (dns/lookups.ts), outside any
 * HTTP request: on a client that token must be prepared (fetched) first, so DNS reads through this.
 */
function dnsRpc(rpc: ForwardingRpc): DnsRpc {
  const acl = rpc.aclResolver;
  if (!acl.prepare) return rpc;
  const read = (async (name, args, opts, signal) => {
    const reply = await rpc.read(name, args, opts, signal);
    if (name === 'query.execute') await acl.prepare!((reply.result.value as { query: { Token?: string } }).query.Token || opts.token);
    return reply;
  }) as ForwardingRpc['read'];
  return { read, aclResolver: acl };
}

/** The token of the agent's own requests: acl.tokens.agent, else acl.tokens.default (Consul's acl_agent_token). */
function agentTokenOf(config: AgentConfig): string | undefined {
  return config.acl.tokens.agent || config.acl.tokens.default;
}

