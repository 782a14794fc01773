// One agent process: LevelDB, the Raft node and its transport, the store, cluster membership,
// the leader's reconcile loop and the HTTP API, wired together and torn down in order.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { LevelStorage, RaftNode, TcpTransport, type ServerInfo } from '@registry/raft';
import { Store, type Command } from '@registry/store';
import type { AgentConfig } from '../config/config';
import { readEndpoints } from '../endpoints';
import { createApp } from '../http/app';
import { createHttpServer } from '../http/http-server';
import type { ClusterOps, RouteDeps } from '../http/routes/deps';
import { allRoutes } from '../http/routes';
import { serverError, badRequest } from '../errors';
import { Joiner } from '../cluster/join';
import { ServerHealth, SERF_CHECK_ID } from '../cluster/server-health';
import { portOf, type ServerFacts } from '../cluster/server-info';
import { Rpc } from '../rpc/rpc';
import { installAcl } from '../acl/install';
import { LeaderDuties } from './leader-duties';
import { Mesh } from '../connect/mesh';
import { installSessions } from '../sessions/install';
import type { SessionRenewer } from '../sessions/session-ttl';
import type { AgentChecks } from '../checks/agent-checks';
import { installAgentChecks } from '../checks/install';
import { createLogger, type Logger } from './logger';
import { loadOrCreateNodeId } from './node-id';
import { storeStateMachine } from './store-fsm';
import { installAreas, type Areas } from '../areas/install';
import { installDns } from '../dns/install';
import type { DnsServer } from '../dns/server';

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    'Operator.RemovePeer': { args: { id?: string; address?: string }; reply: boolean };
    'Operator.TransferLeader': { args: { id?: string }; reply: void };
    'Cluster.AddServer': { args: { id: string; address: string }; reply: void };
  }
}

export const VERSION = '0.1.0';

/**
 * REGISTRY_TEST_DIAL_MAP (test-only): JSON `{ "<peer address>": "<address to dial>" }` so a test
 * can put a proxy on every server-to-server link and cut it to make partitions.
 */
function testDialMap(): Record<string, string> | undefined {
  const raw = process.env.REGISTRY_TEST_DIAL_MAP;
  if (!raw) return undefined;
  const parsed = JSON.parse(raw) as unknown;
  if (!parsed || typeof parsed !== 'object') throw new Error('REGISTRY_TEST_DIAL_MAP must be a JSON object');
  return parsed as Record<string, string>;
}

export interface AgentOptions {
  logger?: Logger;
}

export class Agent {
  private http: Server | null = null;
  /** The DNS interface (undefined when disabled or its default port was taken). */
  private dns: DnsServer | undefined;
  private stopping: Promise<void> | null = null;
  /** The service-mesh side (set once during start). */
  mesh: Mesh | undefined;
  /** Session TTL timers and renewals (set once during start). */
  sessions: SessionRenewer | undefined;
  /** Network areas: links to other datacenters, `?dc=` forwarding, coordinates (set once during start). */
  areas: Areas | undefined;
  /** This agent's checks and the persistence of its services (set once during start). */
  checks: AgentChecks | undefined;
  /** Resolves when the agent has stopped (after `leave`, a signal, or `stop`). */
  readonly stopped: Promise<void>;
  private markStopped!: () => void;

  private constructor(
    readonly config: AgentConfig,
    readonly logger: Logger,
    readonly nodeId: string,
    readonly dataDir: string,
    private readonly tempDataDir: boolean,
    private readonly db: Level<string, unknown>,
    readonly transport: TcpTransport,
    readonly store: Store,
    readonly raft: RaftNode,
    readonly self: ServerFacts,
    private readonly joiner: Joiner,
    readonly leaderDuties: LeaderDuties,
    readonly rpc: Rpc,
  ) {
    this.stopped = new Promise((resolve) => (this.markStopped = resolve));
  }

  static async start(config: AgentConfig, options: AgentOptions = {}): Promise<Agent> {
    const logger = options.logger ?? createLogger(config.logLevel, config.logJson);
    const tempDataDir = !config.dataDir;
    const dataDir = config.dataDir ?? (await mkdtemp(join(tmpdir(), 'registry-dev-')));
    await mkdir(dataDir, { recursive: true });
    const nodeId = await loadOrCreateNodeId(dataDir);
    const db = new Level<string, unknown>(join(dataDir, 'db'), { valueEncoding: 'view' });
    await db.open();

    const transport = await TcpTransport.listen({ host: config.bind, port: config.serverPort, dialMap: testDialMap() });
    const advertiseHost = config.advertise ?? (config.bind === '0.0.0.0' || config.bind === '::' ? '127.0.0.1' : config.bind);
    const address = `${advertiseHost}:${portOf(transport.address)}`;
    const store = new Store({ datacenter: config.datacenter });
    const raft = await RaftNode.create({
      id: nodeId,
      storage: new LevelStorage({ db, prefix: 'raft' }),
      transport,
      fsm: storeStateMachine(store),
      tickMs: config.raft.tickMs,
      electionTicks: config.raft.electionTicks,
      snapshotThreshold: config.raft.snapshotThreshold,
      trailingLogs: config.raft.trailingLogs,
      logger: logger.child({ module: 'agent.server.raft' }),
    });
    const self: ServerFacts = {
      id: nodeId,
      address,
      node: config.nodeName,
      datacenter: config.datacenter,
      bootstrapExpect: config.bootstrapExpect,
    };
    const rpc = new Rpc(raft, store, transport, config.datacenter, readEndpoints);
    const joiner = new Joiner(self, raft, transport, logger.child({ module: 'agent.join' }));
    const health = new ServerHealth(self, raft, store, transport, (cmd: Command) => rpc.apply(cmd, { internal: true }), logger.child({ module: 'agent.leader' }));
    const leaderDuties = new LeaderDuties(raft, logger.child({ module: 'agent.leader' }));
    leaderDuties.add(health);
    const mesh = new Mesh({ config, rpc, store, raft, transport, logger: logger.child({ module: 'agent.connect' }), httpAddress: () => agent.httpAddress });
    leaderDuties.add(mesh.caDuty);
    installAcl(config.acl, { datacenter: config.datacenter, store, rpc, leaderDuties, logger: logger.child({ module: 'agent.acl' }) });
    const agent = new Agent(config, logger, nodeId, dataDir, tempDataDir, db, transport, store, raft, self, joiner, leaderDuties, rpc);
    agent.registerRpc();
    agent.mesh = mesh;
    agent.sessions = installSessions({ store, leaderCalls: rpc.leader, apply: (cmd: Command) => rpc.apply(cmd, { internal: true }), ttlMinMs: config.sessionTtlMinMs, leaderDuties, logger: logger.child({ module: 'agent.session' }) });
    agent.areas = installAreas({ self, version: VERSION, raft, store, rpc, transport, leaderDuties, translateWanAddrs: config.translateWanAddrs, logger: logger.child({ module: 'agent.areas' }) });

    raft.start();
    if (config.bootstrapExpect === 1 && raft.configuration().length === 0) {
      await raft.bootstrap([{ id: nodeId, address }]);
    }
    if (config.retryJoin.length > 0) joiner.start(config.retryJoin);
    leaderDuties.start();
    raft.on('leader', (leader: ServerInfo | null) => {
      logger.info({ leader: leader?.address ?? null, term: raft.term() }, leader ? 'cluster leader known' : 'no cluster leader');
    });

    agent.checks = installAgentChecks({ config, dataDir, mesh, store, apply: (cmd: Command) => rpc.apply(cmd, { internal: true }), aclsEnabled: config.acl.enabled, logger: logger.child({ module: 'agent.checks' }) });
    await agent.listenHttp();
    agent.dns = await installDns({
      rpc, config: config.dns, port: config.dnsPort, portSet: config.dnsPortSet, host: config.client, datacenter: config.datacenter,
      nodeName: config.nodeName, translateWanAddrs: config.translateWanAddrs, defaultToken: () => config.acl.tokens.default,
      remoteQueries: agent.areas?.routes.queryExecutor, logger: logger.child({ module: 'agent.dns' }),
    });
    logger.info(
      { node: config.nodeName, id: nodeId, datacenter: config.datacenter, http: agent.httpAddress, server: address },
      'registry agent running',
    );
    return agent;
  }

  get httpAddress(): string {
    const a = this.http?.address() as AddressInfo | null;
    return a ? `${a.address}:${a.port}` : '';
  }

  get httpPort(): number {
    return (this.http?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** The DNS port (UDP and TCP), 0 when DNS is not served. */
  get dnsPort(): number {
    return this.dns?.port ?? 0;
  }

  /** Stop serving. With `transfer`, a leader first hands leadership to a follower (SIGTERM). */
  stop(options: { transfer?: boolean } = {}): Promise<void> {
    if (!this.stopping) this.stopping = this.shutdown(options.transfer ?? false);
    return this.stopping;
  }

  private async shutdown(transfer: boolean): Promise<void> {
    if (transfer && this.raft.isLeader() && this.raft.configuration().length > 1) {
      try {
        await this.raft.transferLeadership(undefined, 2_000);
        this.logger.info('leadership transferred before shutdown');
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'leadership transfer failed; stopping anyway');
      }
    }
    this.joiner.stop();
    this.leaderDuties.stop();
    this.checks?.stop();
    this.mesh?.stop();
    this.areas?.stop();
    await this.dns?.close();
    if (this.http) {
      const http = this.http;
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    }
    await this.raft.stop();
    await this.transport.close();
    await this.db.close();
    if (this.tempDataDir) await rm(this.dataDir, { recursive: true, force: true });
    this.logger.info('agent stopped');
    this.markStopped();
  }

  private async listenHttp(): Promise<void> {
    const deps: RouteDeps = {
      rpc: this.rpc,
      agent: { nodeName: this.config.nodeName, nodeId: this.nodeId, datacenter: this.config.datacenter, consulCompat: this.config.consulCompat },
      cluster: this.clusterOps(),
      mesh: this.mesh,
      sessions: this.sessions,
      checks: this.checks,
    };
    const routes = allRoutes(deps, this.areas?.routes);
    const app = createApp(routes, {
      datacenter: this.config.datacenter,
      defaultToken: () => this.config.acl.tokens.default,
      logger: this.logger.child({ module: 'agent.http' }),
      consulCompat: this.config.consulCompat,
      translateAddresses: this.config.translateWanAddrs,
    });
    // Bounded receive timeouts (blocking waits come after the request is read and are not cut),
    // idle keep-alive, and a cap on open connections below the descriptor limit (docs/http.md).
    const httpLogger = this.logger.child({ module: 'agent.http' });
    const { server, limits } = createHttpServer(app, this.config.http, httpLogger);
    httpLogger.info({ maxConns: limits.maxConns, maxConnsPerClient: limits.maxConnsPerClient }, 'http connection limits');
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.httpPort, this.config.client, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.http = server;
  }

  /** Operations that must run on the leader (rpc/leader-calls.ts). */
  private registerRpc(): void {
    const calls = this.rpc.leader;
    calls.handle('Operator.RemovePeer', (by) => this.removePeerHere(by));
    calls.handle('Operator.TransferLeader', ({ id }) => this.transferHere(id));
    calls.handle('Cluster.AddServer', async (server) => {
      await this.raft.addServer({ id: server.id, address: server.address });
    });
  }

  private async removePeerHere(by: { id?: string; address?: string }): Promise<boolean> {
    const server = this.raft.configuration().find((s) => (by.id ? s.id === by.id : s.address === by.address));
    if (!server) throw badRequest(`Unknown peer ${by.id ?? by.address}`);
    await this.raft.removeServer(server.id);
    return true;
  }

  private async transferHere(id?: string): Promise<void> {
    await this.raft.transferLeadership(id, 5_000);
  }

  private nodeNameOf(id: string): string {
    if (id === this.nodeId) return this.config.nodeName;
    const node = this.store.catalogNode(id).value?.Node;
    return node && node.ID === id ? node.Node : (this.joiner.nodeNameOf(id) ?? id);
  }

  private clusterOps(): ClusterOps {
    const raft = this.raft;
    return {
      leaderAddress: () => raft.leader()?.address ?? '',
      peers: () => raft.configuration().map((s) => s.address),
      raftConfiguration: async () => {
        const leader = raft.leader();
        return {
          Servers: raft.configuration().map((s) => ({
            ID: s.id,
            Node: this.nodeNameOf(s.id),
            Address: s.address,
            Leader: leader?.id === s.id,
            ProtocolVersion: '3',
            Voter: true,
          })),
          Index: raft.commitIndex(),
        };
      },
      removePeer: async (by) => {
        await this.rpc.leader.call('Operator.RemovePeer', by);
      },
      transferLeader: async (id) => {
        if (raft.configuration().length < 2) throw badRequest('cannot transfer leadership: no other voter');
        await this.rpc.leader.call('Operator.TransferLeader', { id });
      },
      members: async () => this.members(),
      join: async (address) => {
        const replies = await this.joiner.greet([address]);
        if (replies.length === 0) throw serverError(`failed to join ${address}: no registry server answered`);
        const other = replies[0];
        if (raft.configuration().length > 0 && !other.inCluster) {
          await this.rpc.leader.call('Cluster.AddServer', { id: other.id, address: other.address });
        } else if (raft.configuration().length === 0 && other.leader) {
          await this.transport.call(other.leader.address, 'cluster.join', this.self, 10_000);
        }
      },
      leave: async () => {
        if (raft.configuration().length > 1) {
          if (raft.isLeader()) await raft.transferLeadership(undefined, 5_000).catch(() => undefined);
          await this.rpc.leader.call('Operator.RemovePeer', { id: this.nodeId });
        }
        setTimeout(() => void this.stop(), 50);
      },
      self: () => ({
        Config: {
          Datacenter: this.config.datacenter,
          NodeName: this.config.nodeName,
          NodeID: this.nodeId,
          Server: true,
          Version: VERSION,
        },
        Member: this.memberOf({ id: this.nodeId, address: this.self.address }, true),
        Coord: this.areas?.coordinate() ?? null,
        Stats: { raft: raft.stats() },
      }),
    };
  }

  private members(): unknown[] {
    return this.raft.configuration().map((s) => {
      const node = this.nodeNameOf(s.id);
      const serf = this.store.healthNode(node).value.find((c) => c.CheckID === SERF_CHECK_ID);
      return this.memberOf(s, s.id === this.nodeId || serf?.Status !== 'critical');
    });
  }

  /** A member in Consul's /v1/agent/members shape (Status 1 = alive, 4 = failed). */
  private memberOf(s: ServerInfo, alive: boolean) {
    const i = s.address.lastIndexOf(':');
    return {
      Name: this.nodeNameOf(s.id),
      Addr: s.address.slice(0, i),
      Port: Number(s.address.slice(i + 1)),
      Tags: { role: 'registry', dc: this.config.datacenter, id: s.id, port: s.address.slice(i + 1), vsn: '2' },
      Status: alive ? 1 : 4,
      ProtocolMin: 1,
      ProtocolMax: 5,
      ProtocolCur: 2,
      DelegateMin: 2,
      DelegateMax: 5,
      DelegateCur: 4,
    };
  }
}
