// One agent process: LevelDB, the Raft node and its transport, the store, cluster membership,
// the leader's reconcile loop and the HTTP API, wired together and torn down in order.
//
// Why ~760 lines: it is the server agent's composition root (every part built, wired and stopped
// in order, with the reload paths). Issue #26 item 4 (one composition root shared with the client
// agent, Consul's BaseDeps) is what will shrink it; until then the order of construction is kept
// readable in one place.
import { mkdtemp, rm } from 'node:fs/promises';
import { makeDirDurably, syncDir } from '../runtime/durable-file';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { RaftNode, TcpTransport, type RaftStorage, type ServerInfo, type Transport } from '@registry/raft';
import { Store, type Command } from '@registry/store';
import type { AgentConfig } from '../config/config';
import { readEndpoints } from '../endpoints';
import { endpointWrites } from '../endpoints/writes';
import { aclDatacenterGate } from '../acl/acl-datacenter-gate';
import { createApp } from '../http/app';
import { uiAssets } from '../ui/ui-assets';
import { createHttpServer, httpAddressOf, listenHttp, LISTEN_BACKLOG } from '../http/http-server';
import { withRequestLog } from '../http/request-log';
import { softFileLimit } from '../http/connection-limit';
import type { ClusterOps, RouteDeps } from '../http/routes/deps';
import { allRoutes } from '../http/routes';
import { serverError, badRequest } from '../errors';
import { Joiner } from '../cluster/join';
import { LeftMarker } from '../cluster/left-marker';
import { Membership } from '../cluster/membership';
import { installForceLeave } from '../cluster/force-leave';
import { addServerOnce } from '../cluster/add-server';
import { holdsRaftState, raftStorage } from './raft-storage';
import { serverPortLimits, ServerPortRefusals } from './server-port-limits';
import { ServerHealth, SERF_CHECK_ID, SERVER_SERVICE_ID } from '../cluster/server-health';
import { hostOf, portOf, type ServerFacts } from '../cluster/server-info';
import type { BannerFacts } from './banner';
import { ClientLiveness, clientsInCatalog } from '../cluster/client-liveness';
import { installClientGateway } from '../cluster/client-gateway';
import { clientMemberOut } from '../cluster/client-members';
import { serverMember } from '../cluster/member-record';
import { Rpc } from '../rpc/rpc';
import { aclResolverFor, installAclDuties } from '../acl/install';
import { LateRemoteDatacenters } from '../rpc/remote-datacenters';
import { LeaderDuties } from '../runtime/leader-duties';
import { AgentConnect } from '../connect/agent-connect';
import { initialCa } from '../config/connect-config';
import { ManagedProxies } from '../connect/managed-proxies';
import { followManagedProxies } from '../connect/managed-proxy-follower';
import { proxyTokensOf } from '../connect/proxy-tokens';
import { installSessions } from '../sessions/install';
import type { SessionRenewer } from '../sessions/session-ttl';
import type { LocalState } from '../local/local-state';
import type { Syncer } from '../local/syncer';
import { installLocalState } from '../local/install';
import { addLogSecret, createLogger, type Logger } from '../runtime/logger';
import { ConfigReloader, type ReloadResult } from './reload';
import { applyLiveLimits } from './live-limits';
import type { ConnectionLimiter } from '../http/connection-limit';
import { loadOrCreateServerNodeId } from './node-id';
import { checkDataFormat, DATA_FORMAT } from './data-format';
import { runnerFailures } from '../runtime/runner-failures';
import { LogTap } from '../runtime/log-tap';
import { agentLifecycle } from './agent-lifecycle';
import { debugConfig } from './debug-config';
import { advertiseHost } from './advertise-address';
import { AgentTokens } from '../acl/agent-tokens';
import { AutopilotHealth } from '../cluster/autopilot-health';
import type { AgentLifecycle } from '../http/routes/deps';
import { storeStateMachine } from './store-fsm';
import { Metrics } from '../metrics/metrics';
import { installAreas, type Areas } from '../areas/install';
import { installDns } from '../dns/install';
import type { DnsServer } from '../dns/server';
import { clearUploads } from '../snapshot/archive-upload';
import { Snapshots } from '../snapshot/snapshots';
import { installRaftPromote } from '../cluster/raft-promote';
import { peerOf } from '../cluster/peer-lookup';
import { installLeaveServer, leaveCluster } from '../cluster/graceful-leave';
import { loadAgentTls, type AgentTls } from '../tls/tls-files';
import { monotonicMs } from '../time';
import { installWatches } from '../watches/install';
import type { AgentWatches } from '../watches/agent-watches';

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    'Operator.RemovePeer': { args: { id?: string; address?: string }; reply: boolean };
    'Operator.TransferLeader': { args: { id?: string }; reply: void };
    'Cluster.AddServer': { args: { id: string; address: string; learner?: boolean }; reply: void };
  }
}

export const VERSION = '0.1.0';

/** Poll `cond` every 50 ms until it holds (true) or `ms` pass (false). */
async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const deadline = monotonicMs() + ms;
  while (!cond()) {
    if (monotonicMs() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

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
  /**
   * Makes the server's Raft storage from its LevelDB (default: agent/raft-storage.ts — the Raft log in
   * a write-ahead log under `<data-dir>/raft/wal`, or with `raft.log_store = "leveldb"` in that
   * database; snapshots in that database).
   * Tests run agents on MemoryStorage (hashicorp/raft's LogStore seam).
   */
  storage?: (db: Level<string, unknown>) => RaftStorage;
  /**
   * Makes the server-port transport (Raft, RPC, joins). Default: TCP on `bind`:`serverPort`, with
   * TLS when configured. Tests can put several agents on one InMemoryNetwork in one process.
   */
  transport?: (config: AgentConfig) => Promise<Transport>;
  /** Re-reads the configuration for a reload (SIGHUP, PUT /v1/agent/reload); throws ConfigError when it is invalid. */
  loadConfig?: () => AgentConfig;
}

export class Agent {
  private http: Server | null = null;
  /** The HTTPS listener (ports.https), when configured. */
  private https: Server | null = null;
  /** TLS options read from cert_file/key_file/ca_file at start (tls/tls-files.ts). */
  private tls: Pick<AgentTls, 'https'> = {};
  /** The DNS interface (undefined when disabled or its default port was taken). */
  private dns: DnsServer | undefined;
  /** Counts the connections of the HTTP and HTTPS servers together (one share of descriptors). */
  private httpLimiter: ConnectionLimiter | undefined;
  private stopping: Promise<void> | null = null;
  /** The Connect side: agent cache, leaf signer, CA duty (set once during start). */
  connect: AgentConnect | undefined;
  /** Managed proxies' processes, following the local state (set once during start). */
  proxies: ManagedProxies | undefined;
  /** Session TTL timers and renewals (set once during start). */
  sessions: SessionRenewer | undefined;
  /** Network areas: links to other datacenters, `?dc=` forwarding, coordinates (set once during start). */
  areas: Areas | undefined;
  /** This agent's own services and checks (local/local-state.ts; set once during start). */
  local: LocalState | undefined;
  /** Tokens, maintenance, monitor, host, force-leave, WAN view (set once during start). */
  lifecycle: AgentLifecycle | undefined;
  /** Backups, GET/PUT /v1/snapshot (set once during start). */
  snapshots: Snapshots | undefined;
  /** This agent's metrics, GET /v1/agent/metrics (set once during start). */
  metrics: Metrics | undefined;
  /** The config file's watches (set once the HTTP API listens). */
  watches: AgentWatches | undefined;
  /** Keeps this node's services and checks in the catalog: check results and anti-entropy (local/syncer.ts). */
  syncer: Syncer | undefined;
  private stopFollowing: (() => void) | undefined;
  /** Resolves when the agent has stopped (after `leave`, a signal, or `stop`). */
  readonly stopped: Promise<void>;
  /** The process's exit status once stopped: 0, or 1 after a stop on purpose for a fault (docs/operations.md, "What ends the process"). */
  exitCode = 0;
  private markStopped!: () => void;
  private loadConfig: (() => AgentConfig) | undefined;
  private reloader: ConfigReloader | undefined;

  private constructor(
    readonly config: AgentConfig,
    readonly logger: Logger,
    readonly nodeId: string,
    readonly dataDir: string,
    private readonly tempDataDir: boolean,
    private readonly db: Level<string, unknown>,
    readonly transport: Transport,
    readonly store: Store,
    readonly raft: RaftNode,
    readonly self: ServerFacts,
    private readonly joiner: Joiner,
    readonly leaderDuties: LeaderDuties,
    readonly rpc: Rpc,
    private readonly membership: Membership,
  ) {
    this.stopped = new Promise((resolve) => (this.markStopped = resolve));
  }

  static async start(config: AgentConfig, options: AgentOptions = {}): Promise<Agent> {
    // A start that fails (port in use, …) undoes what it made, the -dev temporary dir included.
    const made: { agent?: Agent; tempDir?: string } = {};
    try {
      const agent = await Agent.boot(config, options, made);
      agent.loadConfig = options.loadConfig;
      return agent;
    } catch (err) {
      await made.agent?.stop().catch(() => undefined);
      if (made.tempDir) await rm(made.tempDir, { recursive: true, force: true });
      throw err;
    }
  }

  private static async boot(config: AgentConfig, options: AgentOptions, made: { agent?: Agent; tempDir?: string }): Promise<Agent> {
    // The logger writes through a tap so /v1/agent/monitor can follow its lines.
    const logTap = new LogTap();
    const logger = options.logger ?? createLogger(config.logLevel, config.logJson, logTap.destination);
    for (const token of Object.values(config.acl.tokens)) addLogSecret(token);
    const tempDataDir = !config.dataDir;
    const dataDir = config.dataDir ?? (made.tempDir = await mkdtemp(join(tmpdir(), 'registry-dev-')));
    // Durably: a data dir whose own name a power cut takes is a first start again (issue 35).
    await makeDirDurably(dataDir);
    // Before anything in the data dir is opened: a newer format is refused untouched (agent/data-format.ts).
    const format = await checkDataFormat(dataDir, VERSION);
    logger.info({ dataDir, format: DATA_FORMAT, marker: format }, 'data dir format');
    // LevelDB would make its folder with a plain mkdir: made here so its name is on the disk before
    // any snapshot or id is written into it (a configured node_id writes no node-id file whose
    // directory sync would carry it).
    await makeDirDurably(join(dataDir, 'db'));
    const db = new Level<string, unknown>(join(dataDir, 'db'), { valueEncoding: 'view' });
    await db.open();
    // Every open points LevelDB's CURRENT at a new MANIFEST by a rename it does not sync the folder
    // after; a new database's first MANIFEST is not even synced itself. A power cut before the next
    // folder sync (a memtable flush: rare here, where LevelDB holds only snapshots) left CURRENT
    // naming that empty MANIFEST: "Database failed to open", for good (issue 35, test/powercut).
    await syncDir(join(dataDir, 'db'));
    let nodeId: string;
    try {
      nodeId = await loadOrCreateServerNodeId(dataDir, config.nodeId, { db, hasRaftState: () => holdsRaftState(dataDir, db), logger });
    } catch (err) {
      await db.close();
      throw err;
    }

    const tls = await loadAgentTls(config.tls, config.datacenter);
    const metrics = new Metrics(config.telemetry);
    metrics.start();
    const refusals = new ServerPortRefusals(logger.child({ module: 'agent.server.rpc' }), (reason) => metrics.serverPortRefused(reason));
    // Frames, joins and hellos name this server by the address others reach it by, never by a
    // wildcard bind address (agent/advertise-address.ts; a transport given by the caller — tests:
    // an in-memory network — is reached at its own address).
    const transport = options.transport
      ? await options.transport(config)
      : await TcpTransport.listen({ host: config.bind, advertise: advertiseHost(config), port: config.serverPort, dialMap: testDialMap(), tls: tls.rpc, inbound: serverPortLimits(config.rpc), inboundObserver: refusals });
    const address = transport.address;
    const store = new Store({ datacenter: config.datacenter });
    const raft = await RaftNode.create({
      id: nodeId,
      storage: options.storage ? options.storage(db) : raftStorage(config, dataDir, db),
      transport,
      fsm: storeStateMachine(store, (type, ms) => metrics.fsmApplied(type, ms)),
      observer: { ...metrics.raftObserver, strangerDropped: (from, type, why) => refusals.refused('unknown_sender', from, why) },
      tickMs: config.raft.tickMs,
      electionTicks: config.raft.electionTicks,
      snapshotThreshold: config.raft.snapshotThreshold,
      snapshotIntervalMs: config.raft.snapshotIntervalMs,
      trailingLogs: config.raft.trailingLogs,
      logger: logger.child({ module: 'agent.server.raft' }),
    });
    const self: ServerFacts = {
      id: nodeId,
      address,
      node: config.nodeName,
      datacenter: config.datacenter,
      bootstrapExpect: config.bootstrapExpect,
      nodeMeta: config.nodeMeta,
      ...(config.nonVoter ? { nonVoter: true } : {}),
    };
    if (transport instanceof TcpTransport) {
      // A connection carrying a member's Raft messages is exempt from the port's caps and timeouts.
      transport.setMemberCheck((id) => raft.configuration().some((s) => s.id === id));
      metrics.watchServerPort(() => transport.inboundConnections);
      logger.info({ ...transport.inboundLimits }, 'server port limits');
    }
    // Token writes a secondary datacenter's leader refuses (acl/acl-datacenter-gate.ts).
    const writes = aclDatacenterGate(endpointWrites, {
      isPrimary: (config.primaryDatacenter ?? config.datacenter) === config.datacenter,
      localTokensEnabled: () => !!config.acl.enableTokenReplication && !!config.acl.tokens.replication,
    });
    const left = new LeftMarker(dataDir);
    const catalogNodeName = (id: string) => {
      const node = store.catalogNode(id).value;
      return node && node.Node.ID === id ? node.Node.Node : undefined;
    };
    // Whether this server is still a member: left, or told by the leader it was removed (issue #35).
    const membership = new Membership(raft, nodeId, left, logger.child({ module: 'agent.join' }));
    const aclLogger = logger.child({ module: 'agent.acl' });
    const aclParts = { datacenter: config.datacenter, primaryDatacenter: config.primaryDatacenter, store, logger: aclLogger, timed: (ms: number, hit: boolean) => metrics.aclResolved(ms, hit), nodeName: config.nodeName, agentMaster: () => config.acl.tokens.agentMaster };
    // rpc ↔ acl: the resolver the Rpc checks every request with asks the Rpc itself (acl/install.ts
    // AclRpc); these closures run only once requests arrive, after `rpc` below exists.
    const acl = aclResolverFor(config.acl, { ...aclParts, rpc: { caughtUpWithLeader: () => rpc.caughtUpWithLeader(), read: (...a) => rpc.read(...a) } });
    // rpc ↔ areas: bound to the area links once they exist (rpc/remote-datacenters.ts says why).
    const remote = new LateRemoteDatacenters();
    const rpc: Rpc = new Rpc({
      raft, store, transport, datacenter: config.datacenter, reads: readEndpoints, writes, acl, remote,
      observer: metrics.rpcObserver,
      forwardLog: logger.child({ module: 'agent.rpc' }),
      outOfCluster: () => membership.reason(),
    });
    // clockOffsets is read at scrape time, once `health` below exists.
    metrics.watch({ raft, store, blocking: rpc.blocking, clockOffsets: () => health.clockOffsets.list() });
    const joiner = new Joiner(self, raft, transport, logger.child({ module: 'agent.join' }), membership, catalogNodeName);
    const health = new ServerHealth(self, raft, store, transport, (cmd: Command) => rpc.apply(cmd, { internal: true }), logger.child({ module: 'agent.leader' }), membership);
    installForceLeave(rpc.leader, health);
    const leaderDuties = new LeaderDuties(raft, logger.child({ module: 'agent.leader' }));
    leaderDuties.add(health);
    // Client agents' heartbeats and serfHealth (cluster/client-liveness.ts); the leader is the only writer.
    const clients = new ClientLiveness({ store, leaderCalls: rpc.leader, apply: (cmd: Command) => rpc.apply(cmd, { internal: true }), timeoutMs: config.clients.heartbeatTimeoutMs, logger: logger.child({ module: 'agent.leader' }) });
    leaderDuties.add(clients);
    const failures = runnerFailures(logger.child({ module: 'agent.runners' }), (runner) => metrics.runnerFailed(runner));
    const connect = new AgentConnect({ config, initialCa: initialCa(config), rpc, store, logger: logger.child({ module: 'agent.connect' }) });
    leaderDuties.add(connect.caDuty);
    installAclDuties(config.acl, { ...aclParts, rpc, leaderDuties, replicationToken: () => config.acl.tokens.replication });
    const agent = new Agent(config, logger, nodeId, dataDir, tempDataDir, db, transport, store, raft, self, joiner, leaderDuties, rpc, membership);
    made.agent = agent;
    // The Raft node stops itself when carrying out a Ready failed for a reason other than storage
    // (storage faults are retried, never fatal): a bug in the state machine or Raft. An agent
    // without Raft would only answer 'No cluster leader', so it ends, saying why, and a supervisor
    // restarts it from its data dir (docs/operations.md, "What ends the process").
    raft.on('error', (err: unknown) => {
      logger.fatal({ err: err instanceof Error ? err.message : String(err), stack: err instanceof Error ? err.stack : undefined }, 'stopping the agent: its Raft node stopped after a failure that is not a storage fault');
      agent.exitCode = 1;
      void agent.stop().catch(() => undefined);
    });
    agent.metrics = metrics;
    agent.registerRpc();
    installClientGateway({
      transport, rpc, store,
      servers: () => raft.configuration().map((s) => s.address),
      leader: () => raft.leader()?.address ?? '',
      heartbeatIntervalMs: () => clients.heartbeatIntervalMs,
      members: () => agent.members(),
      raftConfiguration: () => agent.clusterOps().raftConfiguration(),
    });
    agent.connect = connect;
    agent.sessions = installSessions({ store, leaderCalls: rpc.leader, apply: (cmd: Command) => rpc.apply(cmd, { internal: true }), ttlMinMs: config.sessionTtlMinMs, leaderDuties, logger: logger.child({ module: 'agent.session' }), failures });
    agent.tls = tls;
    // An archive a crash left half-checked is nobody's (snapshot/archive-upload.ts).
    await clearUploads(dataDir);
    agent.snapshots = new Snapshots({ store, raft, rpc, datacenter: config.datacenter, transport, dataDir, maxArchiveBytes: () => config.snapshot.restoreMaxBytes, logger: logger.child({ module: 'agent.snapshot' }) });
    agent.areas = installAreas({ self, version: VERSION, raft, store, rpc, transport, leaderDuties, translateWanAddrs: config.translateWanAddrs, logger: logger.child({ module: 'agent.areas' }), secureLink: transport instanceof TcpTransport ? (address, dc, useTls) => transport.setDialTls(address, tls.wanDial(dc, useTls)) : undefined });
    remote.bind(agent.areas.links);

    raft.start();
    if (config.bootstrapExpect === 1 && raft.configuration().length === 0) {
      await raft.bootstrap([{ id: nodeId, address }]);
    }
    if (config.retryJoin.length > 0) joiner.start(config.retryJoin);
    leaderDuties.start();
    raft.on('leader', (leader: ServerInfo | null) => {
      logger.info({ leader: leader?.address ?? null, term: raft.term() }, leader ? 'cluster leader known' : 'no cluster leader');
    });

    // This agent's own services and checks, built as on a client (local/install.ts); the catalog
    // view is this server's store. Anti-entropy runs on a server too (Consul's agent runs it
    // whatever its role): a catalog row of this node that the agent does not hold — a service
    // deregistered through the catalog, a definition set aside at start because it no longer loads
    // — is repaired at the next pass. It starts once the agent's own definitions are restored, so a
    // first pass never removes what is about to be registered again.
    const { local, syncer, maintenance } = await installLocalState({
      config, dataDir, store,
      view: async () => ({ node: store.catalogNode(config.nodeName).value, checks: store.healthNode(config.nodeName).value }),
      apply: (cmd: Command) => rpc.apply(cmd, { internal: true }),
      nodeChecks: (node, minIndex, signal) => connect.nodeChecks(node, minIndex, signal),
      keepService: (id) => id === SERVER_SERVICE_ID,
      logger: logger.child({ module: 'agent.checks' }),
      syncLogger: logger.child({ module: 'agent.anti_entropy' }),
      failures,
    });
    agent.local = local;
    agent.syncer = syncer;
    // Managed proxies follow the local state; they start once the HTTP API they are given listens.
    const proxies = new ManagedProxies(() => agent.httpAddress, logger.child({ module: 'agent.connect' }), failures);
    proxies.hold();
    proxies.reportTo(metrics);
    agent.proxies = proxies;
    agent.stopFollowing = followManagedProxies(local, proxies);
    new AutopilotHealth({ self: { id: nodeId, node: config.nodeName, address }, version: VERSION, raft, store, transport, leaderCalls: rpc.leader });
    const tokens = new AgentTokens(config.acl.tokens, config.acl.enableTokenPersistence ? dataDir : undefined);
    await tokens.load();
    void local.restored.then(() => {
      if (!agent.stopping) syncer.start(config.clients.antiEntropyIntervalMs);
    });
    agent.lifecycle = agentLifecycle({
      datacenter: config.datacenter, dataDir, raft, store, rpc, areas: agent.areas, tokens, maintenance, logTap,
      nodeNameOf: (id) => agent.nodeNameOf(id),
    });
    await agent.listenHttp();
    proxies.release();
    // Watches query this agent's HTTP API, so they start once it listens.
    agent.watches = installWatches({ config, httpAddress: () => agent.httpAddress, failures, logger: logger.child({ module: 'agent.watches' }) });
    agent.dns = await installDns({
      rpc, config: config.dns, port: config.dnsPort, portSet: config.dnsPortSet, host: config.client, datacenter: config.datacenter,
      nodeName: config.nodeName, translateWanAddrs: config.translateWanAddrs, defaultToken: () => config.acl.tokens.default,
      remoteQueries: agent.areas?.routes.queryExecutor, logger: logger.child({ module: 'agent.dns' }),
      fileLimit: softFileLimit(), observer: metrics.dnsObserver,
    });
    logger.info(
      { node: config.nodeName, id: nodeId, datacenter: config.datacenter, http: agent.httpAddress, server: address },
      'registry agent running',
    );
    return agent;
  }

  get httpAddress(): string {
    return httpAddressOf(this.http);
  }

  /** What `registry agent` prints once running (agent/banner.ts). */
  bannerFacts(): BannerFacts {
    return { version: VERSION, nodeId: this.nodeId, config: this.config, httpPort: this.httpPort, httpsPort: this.httpsPort, dnsPort: this.dnsPort, clusterAddress: this.self.address };
  }

  /** 0 when not listening, or listening on a unix socket. */
  get httpPort(): number {
    const a = this.http?.address();
    return a && typeof a !== 'string' ? a.port : 0;
  }

  /** The DNS port (UDP and TCP), 0 when DNS is not served. */
  get dnsPort(): number {
    return this.dns?.port ?? 0;
  }

  /**
   * Re-read the configuration and apply what can change at run time (agent/reload.ts). An invalid
   * configuration throws (ConfigError) and leaves the running one untouched. Reloads run one at a time.
   */
  reload(): Promise<ReloadResult> {
    this.reloader ??= new ConfigReloader(this, this.loadConfig);
    return this.reloader.reload();
  }

  /** A reload changed limits: every listener takes the running config's (agent/live-limits.ts). */
  applyLimits(): void {
    const servers = [this.http, this.https].filter((s): s is Server => s !== null);
    applyLiveLimits(
      {
        http: this.httpLimiter ? { servers, limiter: this.httpLimiter } : undefined,
        serverPort: this.transport instanceof TcpTransport ? this.transport : undefined,
        dns: this.dns,
      },
      this.config,
      this.logger.child({ module: 'agent' }),
    );
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
    this.watches?.stop();
    this.syncer?.stop();
    this.leaderDuties.stop();
    this.metrics?.stop();
    this.stopFollowing?.();
    this.local?.stop();
    this.lifecycle?.maintenance.stop();
    this.connect?.stop();
    this.areas?.stop();
    this.snapshots?.stop();
    await this.dns?.close();
    for (const http of [this.http, this.https]) {
      if (!http) continue;
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
      agent: { nodeName: this.config.nodeName, nodeId: this.nodeId, datacenter: this.config.datacenter,
        primaryDatacenter: this.config.primaryDatacenter,
        localAclTokens: () => (this.config.primaryDatacenter ?? this.config.datacenter) === this.config.datacenter || (!!this.config.acl.enableTokenReplication && !!this.config.acl.tokens.replication),
        consulCompat: this.config.consulCompat,
      },
      cluster: this.clusterOps(),
      connect: this.connect!,
      local: this.local!,
      sessions: this.sessions,
      metrics: this.metrics,
      lifecycle: this.lifecycle,
      reload: () => this.reload(),
      snapshots: this.snapshots,
    };
    const routes = allRoutes(deps, this.areas?.routes);
    const app = createApp(routes, {
      datacenter: this.config.datacenter,
      defaultToken: () => this.config.acl.tokens.default,
      acl: this.rpc.aclResolver,
      proxyTokens: proxyTokensOf(() => this.local, () => this.config.acl.tokens.default),
      logger: this.logger.child({ module: 'agent.http' }),
      consulCompat: this.config.consulCompat,
      translateAddresses: this.config.translateWanAddrs,
      metrics: this.metrics,
      ui: this.webUi(),
    });
    // Bounded receive timeouts (blocking waits come after the request is read and are not cut),
    // idle keep-alive, and a cap on open connections below the descriptor limit (docs/http.md).
    const httpLogger = this.logger.child({ module: 'agent.http' });
    const refused = (reason: string) => this.metrics?.httpRefused(reason);
    const { server, limits, limiter } = createHttpServer(withRequestLog(app, httpLogger), this.config.http, httpLogger, undefined, refused);
    this.httpLimiter = limiter;
    httpLogger.info({ maxConns: limits.maxConns, maxConnsPerClient: limits.maxConnsPerClient }, 'http connection limits');
    // TCP, or a unix socket with addresses.http = "unix:///path".
    await listenHttp(server, this.config);
    this.http = server;
    if (this.tls.https) {
      // HTTPS counts against the same caps (one limiter): both ports together hold HTTP's share.
      const { server: https } = createHttpServer(withRequestLog(app, httpLogger), this.config.http, httpLogger, this.tls.https, refused, limiter);
      await new Promise<void>((resolve, reject) => {
        https.once('error', reject);
        https.listen({ port: this.config.tls.httpsPort, host: this.config.client, backlog: LISTEN_BACKLOG }, () => {
          https.off('error', reject);
          resolve();
        });
      });
      this.https = https;
    }
  }

  /** The web UI's folders when `ui` is on (docs/ui.md); a bundle that was not built is logged, not fatal. */
  private webUi(): { dirs: string[] } | undefined {
    if (!this.config.ui) return undefined;
    const assets = uiAssets(this.config.uiDir);
    if (assets.problem) this.logger.warn({ problem: assets.problem }, 'web UI not available');
    return { dirs: assets.dirs };
  }

  /** The HTTPS port, 0 when HTTPS is not served. */
  get httpsPort(): number {
    return (this.https?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** Operations that must run on the leader (rpc/leader-calls.ts). */
  private registerRpc(): void {
    const calls = this.rpc.leader;
    calls.handle('Operator.RemovePeer', (by) => this.removePeerHere(by));
    calls.handle('Operator.TransferLeader', ({ id }) => this.transferHere(id));
    calls.handle('Cluster.AddServer', async (server) => {
      // Idempotent: the leader's reconciliation may be adding the same server back (cluster/readmission.ts).
      await addServerOnce(this.raft, { id: server.id, address: server.address, ...(server.learner ? { learner: true } : {}) });
    });
    installRaftPromote(this.raft, calls);
    installLeaveServer(this.raft, calls, this.logger.child({ module: 'agent.leader' }));
  }

  private async removePeerHere(by: { id?: string; address?: string }): Promise<boolean> {
    await this.raft.removeServer(peerOf(this.raft, by).id);
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

  clusterOps(): ClusterOps {
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
            Voter: !s.learner,
          })),
          Index: raft.commitIndex(),
        };
      },
      removePeer: async (by) => {
        await this.rpc.leader.call('Operator.RemovePeer', by);
      },
      promotePeer: async (by) => {
        await this.rpc.leader.call('Operator.PromotePeer', by);
      },
      transferLeader: async (id) => {
        if (raft.configuration().filter((s) => !s.learner).length < 2) throw badRequest('cannot transfer leadership: no other voter');
        await this.rpc.leader.call('Operator.TransferLeader', { id });
      },
      members: async () => this.members(),
      join: async (address) => this.joinHere(address),
      leave: async () => {
        // A join or bootstrap still under way must not bring this server back in as it leaves, nor
        // the leader's reconciliation once its removal commits (it asks this server first).
        this.joiner.stop();
        this.membership.startLeaving();
        if (!(await this.aloneForLeave())) {
          // Done only when a committed configuration lacks this server (cluster/graceful-leave.ts).
          const outcome = await leaveCluster({
            self: { id: this.nodeId, address: this.self.address },
            raft,
            transport: this.transport,
            logger: this.logger.child({ module: 'agent.leave' }),
            alsoAsk: this.leaveContacts(),
          });
          // Not confirmed: keep running, as Consul does when a leave fails, so the operator can
          // retry (the request is idempotent) or remove the peer from the leader.
          if (!outcome.complete) {
            this.membership.leaveAbandoned();
            throw serverError(`Graceful leave incomplete: ${outcome.reason}`);
          }
          // Restarted, this server must know it left (its log may still name it a voter): it then
          // joins again through -retry-join or `registry join` (cluster/left-marker.ts).
          new LeftMarker(this.dataDir).mark();
        } else {
          this.logger.child({ module: 'agent.leave' }).info('Graceful leave complete');
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
        DebugConfig: debugConfig(this.config, this.nodeId, hostOf(this.self.address), portOf(this.self.address)),
        // As on a client: the anti-entropy passes this agent ran, the writes they made, and those the ACLs refused.
        Stats: { raft: raft.stats(), antiEntropy: this.syncer?.stats ?? { passes: 0, writes: 0, blocked: 0 } },
      }),
    };
  }

  /** Servers a leave may ask besides the configuration's: the leader heard from, and every server greeted. */
  private leaveContacts(): string[] {
    const leader = this.raft.leader()?.address;
    return [...(leader ? [leader] : []), ...this.joiner.knownAddresses(), ...this.config.retryJoin];
  }

  /**
   * Whether no cluster can hold this server, so that leaving needs nobody's consent: it is the only
   * server of its configuration, or it has none and none of the servers it knows is in a cluster.
   * A server with no configuration is not necessarily outside: one still catching up with the log,
   * or whose cluster formed around it a moment ago, is named by the leader's configuration (a CI
   * run saw such a server "leave" at once and stay listed by the other two).
   */
  private async aloneForLeave(): Promise<boolean> {
    const servers = this.raft.configuration();
    if (servers.length > 0) return servers.length === 1 && servers[0]!.id === this.nodeId;
    if (this.raft.leader()) return false;
    const contacts = this.leaveContacts();
    if (contacts.length === 0) return true;
    const replies = await this.joiner.greet(contacts);
    return !replies.some((r) => r.inCluster);
  }

  /**
   * `registry join` / PUT /v1/agent/join: succeeds only when afterwards this server and the one at
   * `address` are in the same Raft configuration; a join that changed nothing is an error.
   */
  private async joinHere(address: string): Promise<void> {
    const replies = await this.joiner.greet([address]);
    if (replies.length === 0) throw serverError(`failed to join ${address}: no registry server answered`);
    const other = replies[0]!;
    const member = () => this.joiner.inCluster() && this.raft.configuration().some((s) => s.id === other.id);
    // Either side's own configuration may be stale: a removed server's log still names it a voter
    // (the leader stops replicating before it sees its removal), so what the other server's
    // configuration says of this one decides (issue #35). Absent from older servers: taken as yes.
    const namesMe = other.servers?.some((s) => s.id === this.nodeId) ?? true;
    if (member() && (namesMe || !other.inCluster || other.leader?.id === this.nodeId)) return;
    if (member() && other.leader) {
      // Both name each other here, but its cluster no longer holds this server: removed, it joins again.
      await this.joiner.joinThrough(other.leader.address);
    } else if (this.joiner.inCluster()) {
      // It is in a cluster whose configuration does not name this server, nor this one it: another
      // cluster. One that names this server is a member removed from this cluster: add it back.
      if (other.inCluster && !namesMe) throw serverError(`failed to join ${address}: it is a member of another cluster`);
      await this.rpc.leader.call('Cluster.AddServer', { id: other.id, address: other.address, ...(other.nonVoter ? { learner: true } : {}) });
    } else if (other.inCluster) {
      if (!other.leader) throw serverError(`failed to join ${address}: its cluster has no leader`);
      await this.joiner.joinThrough(other.leader.address);
    } else {
      // Neither is in a cluster: join counts toward -bootstrap-expect (both now know each other).
      await this.joiner.attempt([address]);
      if (!this.joiner.inCluster()) {
        throw serverError(`failed to join ${address}: neither server is in a cluster yet (bootstrap-expect ${this.config.bootstrapExpect}, not reached)`);
      }
    }
    if (!(await until(member, 10_000))) throw serverError(`failed to join ${address}: the cluster did not take this server in`);
  }

  private async members(): Promise<unknown[]> {
    return [...this.serverMembers(), ...(await this.clientMembers())];
  }

  /** Client agents as the leader tracks them (cluster/client-liveness.ts); none when no leader answers. */
  private async clientMembers(): Promise<unknown[]> {
    // Without a known leader (a call would wait for one), this server's catalog says alive or failed.
    const local = () => clientsInCatalog(this.store).map((m) => clientMemberOut(m, this.config.datacenter, VERSION));
    if (!this.raft.leader()) return local();
    try {
      const list = await this.rpc.leader.call('Cluster.ClientMembers', {}, 2_000);
      return list.map((m) => clientMemberOut(m, this.config.datacenter, VERSION));
    } catch {
      return local();
    }
  }

  private serverMembers(): unknown[] {
    const config = this.raft.configuration();
    const current = config.map((s) => {
      const node = this.nodeNameOf(s.id);
      const serf = this.store.healthNode(node).value.find((c) => c.CheckID === SERF_CHECK_ID);
      return this.memberOf(s, s.id === this.nodeId || serf?.Status !== 'critical');
    });
    // Servers that left (leave, force-leave, raft remove-peer) keep their catalog node: they are
    // listed with Status 3 (left), as Consul keeps left members until they are reaped.
    const ids = new Set(config.map((s) => s.id));
    // Servers' nodes are found through their `registry` service, not by walking every catalog node
    // (issue #16: 100,000 nodes took seconds of event loop per call).
    const left = this.store.catalogService('registry').value.flatMap((s) => {
      if (s.ServiceID !== 'registry' || !s.ID || ids.has(s.ID)) return [];
      return [serverMember({ name: s.Node, address: `${s.Address}:${s.ServicePort}`, datacenter: this.config.datacenter, id: s.ID, build: VERSION }, 3)];
    });
    return [...current, ...left];
  }

  /** This datacenter's server `s` as a member (cluster/member-record.ts; Status 1 = alive, 4 = failed). */
  private memberOf(s: ServerInfo, alive: boolean) {
    return serverMember({ name: this.nodeNameOf(s.id), address: s.address, datacenter: this.config.datacenter, id: s.id, build: VERSION }, alive ? 1 : 4);
  }
}
