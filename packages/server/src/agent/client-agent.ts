// A client agent (Consul's agent without -server): no Raft and no replicated store. It reaches the
// datacenter through a server's RPC port, heartbeats so the servers keep its node and serfHealth
// check, owns its services and checks (agent endpoints, config definitions, the check runners) and
// keeps them in the catalog by anti-entropy (local/, built as on a server, over the node mirror);
// every other request is forwarded to a live server through ForwardingRpc, the same RpcApi the HTTP
// routes use on a server. `?cached` and the agent cache are served here (cache/agent-cache.ts,
// through AgentConnect). docs/cluster.md "Client agents".
import { TcpTransport } from '@registry/raft';
import type { Command } from '@registry/store';
import type { AgentConfig } from '../config/config';
import type { AgentLifecycle } from '../http/routes/deps';
import { badRequest } from '../errors';
import { allowAllResolver, type AclResolver } from '../rpc/acl-resolver';
import { CachedAclResolver } from '../acl/cached-resolver';
import { withAgentMaster } from '../acl/agent-master';
import { AgentConnect } from '../connect/agent-connect';
import { initialCa } from '../config/connect-config';
import type { DnsRpc } from '../dns/lookups';
import { ForwardingRpc } from '../client/forwarding-rpc';
import { ServerLink } from '../client/server-link';
import { Heartbeats } from '../client/heartbeats';
import { NodeMirror } from '../client/node-mirror';
import { tokenFetcher } from '../client/token-fetch';
import { clientClusterOps, clientForceLeave } from './client-cluster-ops';
import { type Logger } from '../runtime/logger';
import { loadOrCreateNodeId } from './node-id';
import { serverPortLimits, ServerPortRefusals } from './server-port-limits';
import { hostFacts } from './host-facts';
import { debugConfig } from './debug-config';
import { advertiseHost } from './advertise-address';
import { hostOf } from '../cluster/server-info';
import type { BannerFacts } from './banner';
import { type ReloadResult } from './reload';
import { VERSION, type AgentOptions } from './agent';
import { monotonicMs } from '../time';
import { buildBaseDeps, type BaseDeps } from './base-deps';
import { CommonAgent } from './common-agent';
import { AgentShell, startOrUndo, type StartMade } from './agent-shell';
import type { ClusterOps } from '../http/routes/deps';
import { largeAnswerDuty, SliceLane } from '../http/slice-lane';

export class ClientAgent extends AgentShell {
  protected readonly common: CommonAgent;
  private heartbeats!: Heartbeats;
  private mirrorTimer: NodeJS.Timeout | null = null;

  private constructor(
    protected readonly base: BaseDeps,
    readonly nodeId: string,
    private readonly transport: TcpTransport,
    readonly link: ServerLink,
    readonly rpc: ForwardingRpc,
    readonly mirror: NodeMirror,
    loadConfig: (() => AgentConfig) | undefined,
  ) {
    super();
    this.common = new CommonAgent(base, transport, loadConfig, () => ({ nodeMeta: this.heartbeats }));
  }

  static start(config: AgentConfig, options: AgentOptions = {}): Promise<ClientAgent> {
    return startOrUndo((made) => ClientAgent.boot(config, options, made));
  }

  /** The host this client advertises (its catalog node's address), resolved at start. */
  private get advertise(): string {
    return hostOf(this.transport.address);
  }

  private static async boot(config: AgentConfig, options: AgentOptions, made: StartMade<ClientAgent>): Promise<ClientAgent> {
    const base = (made.base = await buildBaseDeps(config, { logger: options.logger, version: VERSION, tempPrefix: 'registry-client-' }, made));
    const { logger, dataDir, tls } = base;
    const nodeId = await loadOrCreateNodeId(dataDir, config.nodeId);
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
    const agent = new ClientAgent(base, nodeId, transport, link, rpc, mirror, options.loadConfig);
    made.agent = agent;

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
    // Built as on a server (agent/common-agent.ts); the catalog view is the node mirror.
    await agent.common.startLocal({ connect, store: mirror.store, view: () => mirror.refresh(), apply });

    agent.heartbeats = new Heartbeats(link, { id: nodeId, node: config.nodeName, address: advertise, port: config.httpPort, nodeMeta: config.nodeMeta }, logger.child({ module: 'agent.client' }), () => {
      void mirror.refresh().catch(() => undefined);
      // As on a server, once the first heartbeat put this node in the catalog.
      agent.common.startSyncer(() => agent.stopping !== null);
    });
    agent.heartbeats.start();

    await agent.common.serve({
      routes: {
        rpc,
        agent: { nodeName: config.nodeName, nodeId, datacenter: config.datacenter, primaryDatacenter: config.primaryDatacenter, consulCompat: config.consulCompat },
        cluster: agent.clusterOps(),
        sessions: { ttlMinMs: config.sessionTtlMinMs, renew: (id: string, token?: string) => rpc.leader.call('Session.Renew', { id }, undefined, token) },
        lifecycle: agent.lifecycle(),
      },
      acl: rpc.aclResolver,
      https: false,
      ui: false,
      dns: { rpc: dnsRpc(rpc) },
      largeAnswerLane: new SliceLane(largeAnswerDuty(process.env.REGISTRY_LARGE_ANSWER_DUTY)),
    });
    logger.info({ node: config.nodeName, id: nodeId, datacenter: config.datacenter, http: agent.httpAddress, servers: config.retryJoin, mode: 'client' }, 'registry agent running');
    return agent;
  }

  get httpAddress(): string {
    return this.common.httpAddress;
  }

  /** What `registry agent` prints once running (agent/banner.ts). */
  bannerFacts(): BannerFacts {
    return { version: VERSION, nodeId: this.nodeId, config: this.config, httpPort: this.httpPort, httpsPort: -1, dnsPort: this.common.dnsPort, clusterAddress: `${this.advertise}:${this.httpPort}` };
  }

  get httpPort(): number {
    return this.common.httpPort;
  }

  /** SIGHUP, PUT /v1/agent/reload: what a server's reload applies (agent/reload.ts), on this client. */
  reload(): Promise<ReloadResult> {
    return this.common.reload();
  }

  stop(_options: { transfer?: boolean } = {}): Promise<void> {
    if (!this.stopping) this.stopping = this.shutdown();
    return this.stopping;
  }

  /** Refresh the node mirror shortly after the agent's own writes (coalesced). */
  private mirrorSoon(): void {
    if (this.mirrorTimer || this.stopping) return;
    this.mirrorTimer = setTimeout(() => {
      this.mirrorTimer = null;
      void this.mirror.refresh().catch(() => undefined);
    }, 50);
  }

  private async shutdown(): Promise<void> {
    this.heartbeats?.stop();
    if (this.mirrorTimer) clearTimeout(this.mirrorTimer);
    this.common.stopWork();
    await this.common.closeListeners();
    await this.transport.close();
    await this.common.finish();
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
    return {
      tokens: this.base.tokens,
      maintenance: this.common.maintenance!,
      monitor: (minRank, listener) => this.base.logTap.attach(minRank, listener),
      host: () => hostFacts(this.dataDir),
      forceLeave: (node, token) => clientForceLeave(this.rpc, node, token),
      wanMembers: () => [],
      wanJoin: async () => {
        throw badRequest('WAN join is done on servers: this is a client agent');
      },
    };
  }

  private clusterOps(): ClusterOps {
    const config = this.config;
    return clientClusterOps({
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
        // The snapshot in force, a reload's included.
        DebugConfig: debugConfig(this.config, this.nodeId, this.advertise, this.httpPort),
        Stats: { agent: { server: this.link.current, servers: this.link.known.join(',') }, antiEntropy: this.syncer?.stats ?? { passes: 0, writes: 0, blocked: 0 } },
      }),
    });
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

