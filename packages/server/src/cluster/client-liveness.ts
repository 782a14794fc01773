// The leader's view of client agents (Consul's serf LAN membership, with heartbeats standing in for
// gossip): every client heartbeats to some server, which passes it on to the leader as a leader
// call; the leader keeps when each client was last heard from, registers its node with a passing
// `serfHealth` check, and marks that check critical once no heartbeat came for `timeoutMs` — which
// invalidates the sessions bound to the node (the store does that for any critical check a session
// names). The leader is the only writer; like server-health.ts it writes only when something differs.
// A new leader starts every client it finds in the catalog with a full timeout of grace, so a
// client that died during the election is still noticed within one timeout after it; so does the
// leader after a restore, for the restored catalog's clients it was not tracking.
import type { Command, HealthCheckOut, NodeOut, RegisterRequest, Store } from '@registry/store';
import type { LeaderDuty } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';
import type { LeaderCallsApi } from '../rpc/rpc-api';
import { CLIENT_ALIVE, CLIENT_DEAD, type ClientFacts, type ClientMember } from './client-facts';
import { SERF_CHECK_ID, SERF_CHECK_NAME } from './server-health';
import { monotonicMs } from '../time';

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    'Cluster.ClientHeartbeat': { args: ClientFacts; reply: void };
    'Cluster.ClientLeave': { args: { node: string }; reply: boolean };
    'Cluster.ClientMembers': { args: Record<string, never>; reply: ClientMember[] };
  }
}

/** Left clients remembered for `members` (Consul keeps left members until reaped). */
const MAX_LEFT = 1_000;

interface Seen {
  facts: ClientFacts;
  at: number;
}

export interface ClientLivenessDeps {
  store: Store;
  leaderCalls: LeaderCallsApi;
  apply: (cmd: Command) => Promise<unknown>;
  timeoutMs: number;
  logger: Logger;
  now?: () => number;
}

/** Whether a catalog node is a client agent's: it has a serfHealth check and is not a server. */
export function isClientNode(store: Store, node: string): boolean {
  const services = store.catalogNode(node).value?.Services ?? {};
  if (services['registry']) return false;
  return store.healthNode(node).value.some((c) => c.CheckID === SERF_CHECK_ID);
}

/**
 * The client agents' nodes with their serfHealth checks, by node name. Found through the store's
 * check ID index rather than by walking the catalog (issue #16: at 100,000 catalog nodes the walk
 * held a new leader's event loop for seconds right as it took office); costs what the clients do.
 */
function clientNodes(store: Store): { node: NodeOut; serf: HealthCheckOut }[] {
  const out: { node: NodeOut; serf: HealthCheckOut }[] = [];
  for (const serf of store.healthChecksWithId(SERF_CHECK_ID).value) {
    // The index ignores case; a client's check is named exactly (isClientNode's test).
    if (serf.CheckID !== SERF_CHECK_ID) continue;
    const entry = store.catalogNode(serf.Node).value;
    if (!entry || entry.Services['registry']) continue;
    out.push({ node: entry.Node, serf });
  }
  return out;
}

/** Client agents as this server's catalog shows them (when the leader cannot be asked). */
export function clientsInCatalog(store: Store): ClientMember[] {
  return clientNodes(store).map(({ node: n, serf }) => ({
    id: n.ID ?? '',
    node: n.Node,
    address: n.Address,
    port: 0,
    status: serf.Status === 'passing' ? ('alive' as const) : ('failed' as const),
  }));
}

export class ClientLiveness implements LeaderDuty {
  readonly name = 'client-liveness';
  private readonly seen = new Map<string, Seen>();
  private readonly left = new Map<string, ClientFacts>();
  private readonly writing = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private unwatch: (() => void) | null = null;
  private readonly now: () => number;

  constructor(private readonly d: ClientLivenessDeps) {
    this.now = d.now ?? monotonicMs;
    d.leaderCalls.handle('Cluster.ClientHeartbeat', (facts) => this.heartbeat(facts));
    d.leaderCalls.handle('Cluster.ClientLeave', ({ node }) => this.leave(node));
    d.leaderCalls.handle('Cluster.ClientMembers', async () => this.members());
  }

  /** How often a client should heartbeat: four chances within one timeout. */
  get heartbeatIntervalMs(): number {
    return Math.max(100, Math.floor(this.d.timeoutMs / 4));
  }

  start(): void {
    this.stop();
    this.adoptCatalog();
    this.watchRestores();
    this.timer = setInterval(() => this.sweep(), Math.max(50, Math.floor(this.d.timeoutMs / 10)));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unwatch?.();
    this.unwatch = null;
    this.seen.clear();
  }

  /**
   * Every client node of the catalog that this leader is not already tracking is tracked from now,
   * with a full timeout of grace: at the start of a term (the catalog is all a new leader knows),
   * and after a restore, whose catalog may hold nodes this leader never heard of or saw leave
   * (Consul's leader reconciles the restored catalog with the members actually alive). Clients
   * already tracked keep their last heartbeat: it is still the truth about them.
   */
  private adoptCatalog(): void {
    const at = this.now();
    for (const { node: n } of clientNodes(this.d.store)) {
      if (this.seen.has(n.Node)) continue;
      const facts: ClientFacts = { id: n.ID ?? '', node: n.Node, address: n.Address, port: 0, nodeMeta: n.Meta ?? {} };
      this.seen.set(n.Node, { facts, at });
      this.left.delete(n.Node);
    }
  }

  /** A watch on no key fires only when the store's whole state is replaced (a restore). */
  private watchRestores(): void {
    this.unwatch = this.d.store.watch([], () => {
      if (!this.timer) return;
      const before = this.seen.size;
      this.adoptCatalog();
      this.d.logger.info({ tracked: this.seen.size, adopted: this.seen.size - before }, 'state restored: client agents of the restored catalog tracked again');
      this.watchRestores();
    });
  }

  private async heartbeat(facts: ClientFacts): Promise<void> {
    this.seen.set(facts.node, { facts, at: this.now() });
    this.left.delete(facts.node);
    await this.ensure(facts, 'passing');
  }

  /** A client leaves (leave, force-leave): its node is deregistered, and it is listed as left. */
  private async leave(node: string): Promise<boolean> {
    const known = this.seen.get(node)?.facts ?? this.fromCatalog(node);
    if (!known && !this.left.has(node)) return false;
    this.seen.delete(node);
    if (known) {
      this.left.set(node, known);
      if (this.left.size > MAX_LEFT) this.left.delete(this.left.keys().next().value as string);
    }
    if (this.d.store.catalogNode(node).value) await this.d.apply({ type: 'catalog.deregister', req: { Node: node } });
    this.d.logger.info({ node }, 'client agent left; node deregistered');
    return true;
  }

  private members(): ClientMember[] {
    const out: ClientMember[] = [];
    for (const { facts } of this.seen.values()) {
      const serf = this.d.store.healthNode(facts.node).value.find((c) => c.CheckID === SERF_CHECK_ID);
      out.push({ id: facts.id, node: facts.node, address: facts.address, port: facts.port, status: serf?.Status === 'passing' ? 'alive' : 'failed' });
    }
    for (const facts of this.left.values()) out.push({ id: facts.id, node: facts.node, address: facts.address, port: facts.port, status: 'left' });
    return out.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  }

  /** Mark every client not heard from within the timeout critical. */
  private sweep(): void {
    const now = this.now();
    for (const { facts, at } of this.seen.values()) {
      if (now - at > this.d.timeoutMs) void this.ensure(facts, 'critical');
    }
  }

  private fromCatalog(node: string): ClientFacts | undefined {
    const n = this.d.store.catalogNode(node).value?.Node;
    if (!n || !isClientNode(this.d.store, node)) return undefined;
    return { id: n.ID ?? '', node: n.Node, address: n.Address, port: 0, nodeMeta: n.Meta ?? {} };
  }

  private async ensure(facts: ClientFacts, status: 'passing' | 'critical'): Promise<void> {
    if (this.writing.has(facts.node)) return;
    const want = registration(facts, status);
    if (this.matches(want)) return;
    this.writing.add(facts.node);
    try {
      if (status === 'critical') this.d.logger.warn({ node: facts.node, timeoutMs: this.d.timeoutMs }, 'client agent missed its heartbeats; marking serfHealth critical');
      else this.d.logger.info({ node: facts.node }, 'client agent alive; serfHealth passing');
      await this.d.apply({ type: 'catalog.register', req: want });
    } catch (err) {
      this.d.logger.debug({ node: facts.node, err: (err as Error).message }, 'client health write failed');
    } finally {
      this.writing.delete(facts.node);
    }
  }

  /** The catalog already holds this node (address, id, meta) with this serfHealth status. */
  private matches(want: RegisterRequest): boolean {
    const node = this.d.store.catalogNode(want.Node).value?.Node;
    if (!node || node.Address !== want.Address || (want.ID && node.ID !== want.ID)) return false;
    const meta = node.Meta ?? {};
    const wantMeta = want.NodeMeta ?? {};
    if (Object.keys(meta).length !== Object.keys(wantMeta).length || Object.keys(wantMeta).some((k) => meta[k] !== wantMeta[k])) return false;
    const check = this.d.store.healthNode(want.Node).value.find((c) => c.CheckID === SERF_CHECK_ID);
    return !!check && check.Status === want.Check?.Status && check.Output === want.Check?.Output;
  }
}

function registration(facts: ClientFacts, status: 'passing' | 'critical'): RegisterRequest {
  return {
    ...(facts.id ? { ID: facts.id } : {}),
    Node: facts.node,
    Address: facts.address,
    TaggedAddresses: { lan: facts.address, wan: facts.address },
    NodeMeta: facts.nodeMeta,
    Check: { CheckID: SERF_CHECK_ID, Name: SERF_CHECK_NAME, Status: status, Output: status === 'passing' ? CLIENT_ALIVE : CLIENT_DEAD, ServiceID: '' },
  };
}
