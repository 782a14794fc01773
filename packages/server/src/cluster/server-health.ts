// The leader keeps every server's catalog entry true (Consul's leader reconcile loop, with an
// RPC ping standing in for gossip): each server is a node with the `registry` service and a
// `serfHealth` check that is passing while the server answers and critical when it does not —
// or when it answers that its Raft storage fails (a full disk: it takes no part in Raft until a
// write succeeds again, so it must not look healthy), with that reason as the check's Output.
// It writes only when something differs, so a quiet cluster writes nothing.
import { joinHostPort, type RaftNode, type Transport } from '@registry/raft';
import type { Command, RegisterRequest, Store } from '@registry/store';
import type { LeaderDuty } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';
import { hostOf, portOf, type InfoReply, type ServerFacts } from './server-info';
import { ClockOffsets } from './clock-offsets';
import { monotonicMs } from '../time';
import { SERF_CHECK_ID } from '../checks/service-health';
import type { Membership, RemovalNotice } from './membership';
import { Readmission } from './readmission';
import { DeadServerCleanup } from './dead-servers';
import { LearnerAutopilot } from './learner-autopilot';

const INTERVAL_MS = 1_000;
const SEGMENT_META_KEY = 'registry-network-segment';

/** Same keys with the same values, in any order. */
function plainEqual(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}
const PING_TIMEOUT_MS = 800;
/** Consecutive failed pings before a server is reported critical. */
const FAILURES_BEFORE_CRITICAL = 2;

export { SERF_CHECK_ID };
/** The service the leader registers on every server's node (Consul's `consul` service). */
export const SERVER_SERVICE_ID = 'registry';
export const SERF_CHECK_NAME = 'Serf Health Status';
const ALIVE = 'Agent alive and reachable';
const DEAD = 'Agent not live or unreachable';
/**
 * The serfHealth output of a server that was force-left (or left): the replicated record that keeps
 * the leader's reconciliation from adding it back (readmission.ts). A server that joins again is
 * registered passing, which clears it.
 */
export const LEFT_OUTPUT = 'Agent left the cluster';

export class ServerHealth implements LeaderDuty {
  readonly name = 'server-health';
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private unwatch: (() => void) | null = null;
  /** A restore was applied since the last pass: reap the servers it brought that are not members. */
  private restored = false;
  private readonly facts = new Map<string, ServerFacts>();
  private readonly failures = new Map<string, number>();
  /** When each server's pings started going unanswered (monotonicMs()), for autopilot's dead server cleanup. */
  private readonly unansweredSince = new Map<string, number>();
  /** Adds back servers removed while alive (readmission.ts). */
  readonly readmission: Readmission;
  private readonly deadServers: DeadServerCleanup;
  /** Promotes caught-up non-voters that do not declare -non-voter (learner-autopilot.ts). */
  private readonly learners: LearnerAutopilot;
  /** Each server's wall clock against this leader's, from the pings (empty while not leading). */
  readonly clockOffsets: ClockOffsets;

  constructor(
    private self: ServerFacts,
    private readonly raft: RaftNode,
    private readonly store: Store,
    private readonly transport: Transport,
    private readonly apply: (cmd: Command) => Promise<unknown>,
    private readonly logger: Logger,
    /** This server's own standing (told by the leader when it was removed); absent in tests of the leader alone. */
    private readonly membership?: Membership,
  ) {
    transport.handle('cluster.info', (body) => {
      // The leader's ping says whether its configuration holds this server (membership.ts).
      const ping = body as { notice?: RemovalNotice; member?: { leader: string; term: number } } | null;
      if (ping?.notice) this.membership?.noticed(ping.notice);
      else if (ping?.member) this.membership?.confirmed(ping.member);
      return this.info();
    });
    this.clockOffsets = new ClockOffsets(logger, monotonicMs);
    this.readmission = new Readmission({ self, raft, store, transport, logger, markedLeft: (node) => this.markedLeft(node) });
    this.deadServers = new DeadServerCleanup({
      selfId: self.id, raft, store, logger,
      unansweredForMs: (id) => {
        const since = this.unansweredSince.get(id);
        return since === undefined ? undefined : monotonicMs() - since;
      },
    });
    this.learners = new LearnerAutopilot({ selfId: self.id, raft, transport, logger });
  }
  /**
   * A reload's `node_meta` (agent/reload.ts): this server's facts carry it from now on; the leader
   * reads them every second and registers the node again when they changed.
   */
  reload(nodeMeta: Record<string, string>): void {
    this.self = { ...this.self, nodeMeta };
  }


  /**
   * What this server answers to `cluster.info`: its facts, and why its Raft storage fails while
   * that keeps it out of Raft (a 'log' fault). A failing background snapshot alone is not reported
   * here — the server still takes part — but shows in /v1/agent/self and the log.
   */
  info(): InfoReply {
    const fault = this.raft.storageFault();
    const wallMs = Date.now();
    const left = this.membership?.hasLeft() ? { left: true } : {};
    return fault?.kind === 'log' ? { ...this.self, storageFault: fault.message, wallMs, ...left } : { ...this.self, wallMs, ...left };
  }

  start(): void {
    this.stop();
    this.failures.clear();
    this.unansweredSince.clear();
    this.watchRestores();
    const loop = async () => {
      if (this.raft.leaderReady() && !this.running) {
        this.running = true;
        try {
          await this.reconcilePass();
          // Promotion runs on this same one-second cadence (Consul's autopilot also works from its
          // periodic server health): as often as a joiner asks on its own, so a learner that stopped
          // asking waits no longer than one that keeps asking, and it costs only a ping per learner.
          // Apart from the catalog work, so that a failing catalog write does not hold it up.
          await this.promotionPass();
        } finally {
          this.running = false;
        }
      }
      if (this.timer) this.timer = setTimeout(loop, INTERVAL_MS);
    };
    this.timer = setTimeout(loop, 0);
  }

  private async reconcilePass(): Promise<void> {
    try {
      if (this.restored) {
        // Cleared first, so that a restore applied while the reap runs sets it again; set back when
        // the reap fails, so that a deregistration that did not go through is tried on the next pass.
        this.restored = false;
        try {
          await this.reapForeignServers();
        } catch (err) {
          this.restored = true;
          throw err;
        }
      }
      await this.reconcile();
      // Membership (issue #35): removed servers that are alive come back; dead ones go when a quorum allows.
      await this.readmission.pass();
      await this.deadServers.pass();
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'server health reconcile failed');
    }
  }

  private async promotionPass(): Promise<void> {
    try {
      if (this.raft.leaderReady()) await this.learners.pass();
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'autopilot promotion pass failed');
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.clockOffsets.retain(new Set());
    this.unwatch?.();
    this.unwatch = null;
    this.restored = false;
  }

  /** A watch on no key fires only when the store's whole state is replaced (a restore). */
  private watchRestores(): void {
    this.unwatch = this.store.watch([], () => {
      this.restored = true;
      this.watchRestores();
    });
  }

  /**
   * After a restore: a server's node in the restored catalog that is not in this cluster's Raft
   * configuration (an archive of another cluster, or of this one before a server was removed) is
   * deregistered, as Consul's leader reaps catalog members that are not cluster members
   * (leader.go reconcileReaped). Left alone it would stay passing for good: nothing pings it.
   */
  private async reapForeignServers(): Promise<void> {
    const members = new Set(this.raft.configuration().map((s) => s.id));
    for (const check of this.store.healthChecksWithId(SERF_CHECK_ID).value) {
      if (check.CheckID !== SERF_CHECK_ID) continue;
      const entry = this.store.catalogNode(check.Node).value;
      if (!entry?.Services['registry'] || members.has(entry.Node.ID ?? '')) continue;
      this.logger.info({ node: entry.Node.Node, id: entry.Node.ID }, 'restored catalog has a server that is not in the Raft configuration; deregistering it');
      await this.apply({ type: 'catalog.deregister', req: { Node: entry.Node.Node } });
    }
  }

  /** One pass over the Raft configuration. */
  async reconcile(): Promise<void> {
    const configuration = this.raft.configuration();
    this.clockOffsets.retain(new Set(configuration.map((s) => s.id)));
    await Promise.all(
      configuration.map(async (server) => {
        let reply: InfoReply | undefined;
        if (server.id === this.self.id) reply = this.info();
        else {
          try {
            const sentWall = Date.now();
            const member = { leader: this.self.id, term: this.raft.term() };
            reply = (await this.transport.call(server.address, 'cluster.info', { member }, PING_TIMEOUT_MS)) as InfoReply;
            if (typeof reply.wallMs === 'number') this.clockOffsets.observe(server.id, reply.node, server.address, sentWall, Date.now(), reply.wallMs);
          } catch {
            reply = undefined;
          }
        }
        if (reply) {
          const { storageFault, wallMs: _wall, left: _left, ...facts } = reply;
          this.failures.set(server.id, 0);
          this.unansweredSince.delete(server.id);
          this.facts.set(server.id, facts);
          if (storageFault) await this.ensure(facts, 'critical', storageFault);
          else await this.ensure(facts, 'passing');
        } else {
          const n = (this.failures.get(server.id) ?? 0) + 1;
          this.failures.set(server.id, n);
          if (!this.unansweredSince.has(server.id)) this.unansweredSince.set(server.id, monotonicMs());
          // A leader elected while a server was down never pinged it: the catalog remembers it.
          const known = this.facts.get(server.id) ?? this.fromCatalog(server.id, server.address);
          if (known && n >= FAILURES_BEFORE_CRITICAL) await this.ensure(known, 'critical');
        }
      }),
    );
  }

  /** Whether the catalog marks server node `node` as left (force-leave). */
  markedLeft(node: string): boolean {
    const check = this.store.healthNode(node).value.find((c) => c.CheckID === SERF_CHECK_ID);
    return check?.Status === 'critical' && check.Output === LEFT_OUTPUT;
  }

  /**
   * Force-leave on the leader: server `id` is taken out of the configuration and its catalog node
   * marked left, so that no leader adds it back on its own (readmission.ts); it returns through
   * `join`. Idempotent: a server already out is only marked.
   */
  async forceLeave(id: string): Promise<void> {
    this.readmission.keepOut(id);
    const address = this.raft.configuration().find((s) => s.id === id)?.address;
    await this.raft.removeServer(id);
    const entry = this.store.catalogNode(id).value;
    const node = entry?.Node;
    if (!entry || !node || node.ID !== id) return;
    const facts = this.fromCatalog(id, address ?? joinHostPort(node.Address, entry.Services['registry']?.Port ?? 0));
    if (!facts || this.markedLeft(node.Node)) return;
    this.logger.info({ node: node.Node, id }, 'server force-left: marked left, it is not added back until it joins again');
    await this.apply({ type: 'catalog.register', req: registration(facts, 'critical', LEFT_OUTPUT) });
  }

  private fromCatalog(id: string, address: string): ServerFacts | undefined {
    const node = this.store.catalogNode(id).value?.Node;
    if (!node || node.ID !== id) return undefined;
    // Its node_meta as last written, so a critical mark does not wipe it.
    const { [SEGMENT_META_KEY]: _segment, ...nodeMeta } = node.Meta ?? {};
    return { id, address, node: node.Node, datacenter: node.Datacenter, bootstrapExpect: 0, nodeMeta };
  }

  /** `output` overrides the check's Output (a server that answers but reports a fault). */
  private async ensure(facts: ServerFacts, status: 'passing' | 'critical', output?: string): Promise<void> {
    const want = registration(facts, status, output);
    if (this.matches(want)) return;
    await this.reapReplaced(facts);
    if (output) this.logger.warn({ node: facts.node, reason: output }, 'server reports a storage fault; marking serfHealth critical');
    else if (status === 'critical') this.logger.warn({ node: facts.node }, 'server is not answering; marking serfHealth critical');
    await this.apply({ type: 'catalog.register', req: want });
  }

  /**
   * A server replaced under its node name (a new id joining with an empty disk, cluster/join.ts):
   * the old id's catalog node reserves the name, so the new server could never be registered —
   * it stayed without a passing serfHealth, unhealthy for good. A node of that name whose id is no
   * longer in the Raft configuration is deregistered first, as Consul's leader reaps catalog members
   * that left the cluster (leader.go reconcileReaped).
   */
  private async reapReplaced(facts: ServerFacts): Promise<void> {
    const existing = this.store.catalogNode(facts.node).value?.Node;
    if (!existing?.ID || existing.ID.toLowerCase() === facts.id.toLowerCase()) return;
    if (this.raft.configuration().some((s) => s.id === existing.ID)) return;
    this.logger.info({ node: facts.node, old: existing.ID, new: facts.id }, 'a server replaced under its node name: deregistering the old id\'s node');
    await this.apply({ type: 'catalog.deregister', req: { Node: existing.Node } });
  }

  /** True when the catalog already holds exactly this node, service and check. */
  private matches(want: RegisterRequest): boolean {
    const node = this.store.catalogNode(want.Node).value;
    if (!node || node.Node.Address !== want.Address || node.Node.ID !== want.ID) return false;
    if (!plainEqual(node.Node.Meta ?? {}, want.NodeMeta ?? {})) return false;
    const tagged = node.Node.TaggedAddresses;
    if (tagged?.lan !== want.Address || tagged?.wan !== want.Address) return false;
    const svc = node.Services['registry'];
    if (!svc || svc.Port !== want.Service?.Port) return false;
    const check = this.store.healthNode(want.Node).value.find((c) => c.CheckID === SERF_CHECK_ID);
    return !!check && check.Status === want.Check?.Status && check.Output === want.Check?.Output;
  }
}

function registration(facts: ServerFacts, status: 'passing' | 'critical', output?: string): RegisterRequest {
  return {
    ID: facts.id,
    Node: facts.node,
    Address: hostOf(facts.address),
    Datacenter: facts.datacenter,
    // An agent's node carries its LAN and WAN addresses (Consul's API tests assert both); a server
    // has one address, so both are it.
    TaggedAddresses: { lan: hostOf(facts.address), wan: hostOf(facts.address) },
    // The server's node_meta (Consul puts it on the agent's own node); the segment key is the registry's.
    NodeMeta: { ...(facts.nodeMeta ?? {}), [SEGMENT_META_KEY]: '' },
    Service: { ID: SERVER_SERVICE_ID, Service: SERVER_SERVICE_ID, Port: portOf(facts.address), Tags: [], Meta: {} },
    Check: {
      CheckID: SERF_CHECK_ID,
      Name: SERF_CHECK_NAME,
      Status: status,
      Output: output ?? (status === 'passing' ? ALIVE : DEAD),
      ServiceID: '',
    },
  } as RegisterRequest;
}
