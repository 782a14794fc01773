// A server agent: LevelDB, the Raft node and its transport, the store, cluster membership, the
// leader's duties, wired in order on what every agent is built on (agent/base-deps.ts) and beside
// the half both agent kinds share — local state, Connect, watches, the HTTP and DNS listeners,
// reload (agent/common-agent.ts) — and torn down in order.
//
// Why ~590 lines: it is the server agent's composition root (its parts built and wired in the
// order they need each other, read top to bottom in `boot`) and its cluster operations (join,
// leave, members, the Raft configuration), which read the same few fields.
import { makeDirDurably, syncDir } from '../runtime/durable-file';
import { join } from 'node:path';
import { Level } from 'level';
import { RaftNode, TcpTransport, type RaftStorage, type ServerInfo, type Transport } from '@registry/raft';
import { Store, type Command } from '@registry/store';
import type { AgentConfig } from '../config/config';
import { readEndpoints } from '../endpoints';
import { endpointWrites } from '../endpoints/writes';
import { aclDatacenterGate } from '../acl/acl-datacenter-gate';
import type { ClusterOps } from '../http/routes/deps';
import { serverError, badRequest } from '../errors';
import { Joiner } from '../cluster/join';
import { LeftMarker } from '../cluster/left-marker';
import { Membership } from '../cluster/membership';
import { installForceLeave } from '../cluster/force-leave';
import { admitServer } from '../cluster/add-server';
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
import { installSessions } from '../sessions/install';
import type { SessionRenewer } from '../sessions/session-ttl';
import { type Logger } from '../runtime/logger';
import { type ReloadResult } from './reload';
import { loadOrCreateServerNodeId } from './node-id';
import { agentLifecycle } from './agent-lifecycle';
import { debugConfig } from './debug-config';
import { advertiseHost } from './advertise-address';
import { AutopilotHealth } from '../cluster/autopilot-health';
import type { AgentLifecycle } from '../http/routes/deps';
import { storeStateMachine } from './store-fsm';
import { installAreas, type Areas } from '../areas/install';
import { clearScratchDirs } from '../snapshot/scratch-dirs';
import { RestoreStaging } from '../snapshot/restore-staging';
import { collectReplacedState, RESTORE_YOUNG_BYTES, scavengeAbove } from './young-generation';
import { Snapshots } from '../snapshot/snapshots';
import { installRaftPromote } from '../cluster/raft-promote';
import { peerOf } from '../cluster/peer-lookup';
import { installLeaveServer, leaveCluster } from '../cluster/graceful-leave';
import { monotonicMs } from '../time';
import { JsonEncoder } from '../http/json-encoder';
import { largeAnswerDuty, SliceLane } from '../http/slice-lane';
import { buildBaseDeps, type BaseDeps } from './base-deps';
import { CommonAgent } from './common-agent';
import { AgentShell, startOrUndo, type StartMade } from './agent-shell';

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

export class Agent extends AgentShell {
  /** Session TTL timers and renewals (set once during start). */
  sessions: SessionRenewer | undefined;
  /** Network areas: links to other datacenters, `?dc=` forwarding, coordinates (set once during start). */
  areas: Areas | undefined;
  /** Tokens, maintenance, monitor, host, force-leave, WAN view (set once during start). */
  lifecycle: AgentLifecycle | undefined;
  /** Backups, GET/PUT /v1/snapshot (set once during start). */
  snapshots: Snapshots | undefined;
  protected readonly common: CommonAgent;

  private constructor(
    protected readonly base: BaseDeps,
    readonly nodeId: string,
    private readonly db: Level<string, unknown>,
    readonly transport: Transport,
    readonly store: Store,
    readonly raft: RaftNode,
    readonly self: ServerFacts,
    private readonly joiner: Joiner,
    readonly leaderDuties: LeaderDuties,
    readonly rpc: Rpc,
    private readonly membership: Membership,
    /** This server's catalog entry and serfHealth, kept by the leader from its facts (node_meta among them). */
    private readonly health: ServerHealth,
    loadConfig: (() => AgentConfig) | undefined,
  ) {
    super();
    this.common = new CommonAgent(base, transport instanceof TcpTransport ? transport : undefined, loadConfig, () => ({ nodeMeta: this.health, snapshots: this.snapshots }));
  }

  static start(config: AgentConfig, options: AgentOptions = {}): Promise<Agent> {
    return startOrUndo((made) => Agent.boot(config, options, made));
  }

  private static async boot(config: AgentConfig, options: AgentOptions, made: StartMade<Agent>): Promise<Agent> {
    const base = (made.base = await buildBaseDeps(config, { logger: options.logger, version: VERSION, tempPrefix: 'registry-dev-' }, made));
    const { logger, dataDir, tls, metrics, failures } = base;
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

    const refusals = new ServerPortRefusals(logger.child({ module: 'agent.server.rpc' }), (reason) => metrics.serverPortRefused(reason));
    // Frames, joins and hellos name this server by the address others reach it by, never by a
    // wildcard bind address (agent/advertise-address.ts; a transport given by the caller — tests:
    // an in-memory network — is reached at its own address).
    const transport = options.transport
      ? await options.transport(config)
      : await TcpTransport.listen({ host: config.bind, advertise: advertiseHost(config), port: config.serverPort, dialMap: testDialMap(), tls: tls.rpc, inbound: serverPortLimits(config.rpc), inboundObserver: refusals });
    const address = transport.address;
    // Large answers' slices (http/sliced-json.ts) and the steps of a large listing's first build
    // (store catalog/listing-steps.ts), the first part of a large answer, take turns in one lane,
    // within one share of the event loop: made here, handed to the store and to the HTTP app.
    const largeAnswerLane = new SliceLane(largeAnswerDuty(process.env.REGISTRY_LARGE_ANSWER_DUTY));
    const store = new Store({ datacenter: config.datacenter, listingLane: largeAnswerLane });
    // A restore's state file, staged on every server ahead of its entry (snapshot/restore-staging.ts);
    // the state machine waits for it when an entry names one (`raft` exists by the time it is asked).
    const staging = new RestoreStaging({
      dataDir, store, transport,
      selfId: () => nodeId,
      servers: () => raft.configuration(),
      firstLogIndex: () => raft.firstLogIndex(),
      logger: logger.child({ module: 'agent.snapshot' }),
      afterLoadStep: () => scavengeAbove(RESTORE_YOUNG_BYTES),
    });
    await staging.start();
    // Set once `raft` exists: a restore replayed while it is created keeps its trailing entries.
    let discardLogThrough: ((index: number) => void) | undefined;
    const raft = await RaftNode.create({
      id: nodeId,
      storage: options.storage ? options.storage(db) : raftStorage(config, dataDir, db),
      transport,
      fsm: storeStateMachine(store, (type, ms) => metrics.fsmApplied(type, ms), () => staging, (index) => discardLogThrough?.(index)),
      observer: { ...metrics.raftObserver, strangerDropped: (from, type, why) => refusals.refused('unknown_sender', from, why) },
      tickMs: config.raft.tickMs,
      electionTicks: config.raft.electionTicks,
      snapshotThreshold: config.raft.snapshotThreshold,
      snapshotIntervalMs: config.raft.snapshotIntervalMs,
      trailingLogs: config.raft.trailingLogs,
      logger: logger.child({ module: 'agent.server.raft' }),
    });
    // Once the log no longer holds the replaced state's entries, nothing does: have V8 collect it.
    discardLogThrough = (index) => void raft.discardLogThrough(index).then(collectReplacedState);
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
    const connect = new AgentConnect({ config, initialCa: initialCa(config), rpc, store, logger: logger.child({ module: 'agent.connect' }) });
    leaderDuties.add(connect.caDuty);
    installAclDuties(config.acl, { ...aclParts, rpc, leaderDuties, replicationToken: () => config.acl.tokens.replication });
    const agent = new Agent(base, nodeId, db, transport, store, raft, self, joiner, leaderDuties, rpc, membership, health, options.loadConfig);
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
    agent.registerRpc();
    installClientGateway({
      transport, rpc, store,
      servers: () => raft.configuration().map((s) => s.address),
      leader: () => raft.leader()?.address ?? '',
      heartbeatIntervalMs: () => clients.heartbeatIntervalMs,
      members: () => agent.members(),
      raftConfiguration: () => agent.clusterOps().raftConfiguration(),
    });
    agent.sessions = installSessions({ store, leaderCalls: rpc.leader, apply: (cmd: Command) => rpc.apply(cmd, { internal: true }), ttlMinMs: config.sessionTtlMinMs, leaderDuties, logger: logger.child({ module: 'agent.session' }), failures });
    // An archive a crash left half-checked, or a save it left half-sent, is nobody's
    // (snapshot/scratch-dirs.ts).
    await clearScratchDirs(dataDir);
    agent.snapshots = new Snapshots({ store, raft, rpc, datacenter: config.datacenter, staging, dataDir, maxArchiveBytes: config.snapshot.restoreMaxBytes, logger: logger.child({ module: 'agent.snapshot' }) });
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
    await agent.common.startLocal({
      connect, store,
      view: async () => ({ node: store.catalogNode(config.nodeName).value, checks: store.healthNode(config.nodeName).value }),
      apply: (cmd: Command) => rpc.apply(cmd, { internal: true }),
      keepService: (id: string) => id === SERVER_SERVICE_ID,
    });
    new AutopilotHealth({ self: { id: nodeId, node: config.nodeName, address }, version: VERSION, raft, store, transport, leaderCalls: rpc.leader });
    agent.common.startSyncer(() => agent.stopping !== null);
    agent.lifecycle = agentLifecycle({
      datacenter: config.datacenter, dataDir, raft, store, rpc, areas: agent.areas, tokens: base.tokens, maintenance: agent.common.maintenance!, logTap: base.logTap,
      nodeNameOf: (id) => agent.nodeNameOf(id),
    });
    await agent.common.serve({
      routes: {
        rpc,
        agent: { nodeName: config.nodeName, nodeId, datacenter: config.datacenter, primaryDatacenter: config.primaryDatacenter, consulCompat: config.consulCompat,
          localAclTokens: () => (config.primaryDatacenter ?? config.datacenter) === config.datacenter || (!!config.acl.enableTokenReplication && !!config.acl.tokens.replication),
        },
        cluster: agent.clusterOps(),
        sessions: agent.sessions,
        lifecycle: agent.lifecycle,
        snapshots: agent.snapshots,
      },
      wan: agent.areas?.routes,
      acl: rpc.aclResolver,
      https: true,
      ui: true,
      dns: { rpc, remoteQueries: agent.areas?.routes.queryExecutor },
      largeAnswerLane,
      json: new JsonEncoder(rpc.sharedValues),
    });
    logger.info(
      { node: config.nodeName, id: nodeId, datacenter: config.datacenter, http: agent.httpAddress, server: address },
      'registry agent running',
    );
    return agent;
  }

  get httpAddress(): string {
    return this.common.httpAddress;
  }

  /** What `registry agent` prints once running (agent/banner.ts). */
  bannerFacts(): BannerFacts {
    return { version: VERSION, nodeId: this.nodeId, config: this.config, httpPort: this.httpPort, httpsPort: this.common.httpsPort, dnsPort: this.dnsPort, clusterAddress: this.self.address };
  }

  /** 0 when not listening, or listening on a unix socket. */
  get httpPort(): number {
    return this.common.httpPort;
  }

  /** The DNS port (UDP and TCP), 0 when DNS is not served. */
  get dnsPort(): number {
    return this.common.dnsPort;
  }

  /** The HTTPS port, 0 when HTTPS is not served. */
  get httpsPort(): number {
    return this.common.httpsPort;
  }

  /**
   * Re-read the configuration and apply what can change at run time (agent/reload.ts). An invalid
   * configuration throws (ConfigError) and leaves the running one untouched. Reloads run one at a time.
   */
  reload(): Promise<ReloadResult> {
    return this.common.reload();
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
    this.common.stopWork();
    this.areas?.stop();
    this.snapshots?.stop();
    await this.common.closeListeners();
    await this.raft.stop();
    await this.transport.close();
    await this.db.close();
    await this.common.finish();
    this.markStopped();
  }

  /** Operations that must run on the leader (rpc/leader-calls.ts). */
  private registerRpc(): void {
    const calls = this.rpc.leader;
    calls.handle('Operator.RemovePeer', (by) => this.removePeerHere(by));
    calls.handle('Operator.TransferLeader', ({ id }) => this.transferHere(id));
    calls.handle('Cluster.AddServer', async (server) => {
      // `registry join <new server>` run on a member: admitted as one that asks to join is, and
      // made a voter by the leader's autopilot pass once it answers and has caught up
      // (cluster/learner-autopilot.ts). Idempotent: the leader's reconciliation may be adding the
      // same server back (cluster/readmission.ts).
      await admitServer(this.raft, server);
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
