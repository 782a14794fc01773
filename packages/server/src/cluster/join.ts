// Forming and joining a cluster (Consul's -bootstrap-expect and -retry-join, without gossip):
// servers greet the addresses they were given; a server with no Raft state either joins an
// existing cluster through its leader, or — once it knows `bootstrap-expect` servers and none of
// them is in a cluster yet — bootstraps Raft with exactly those servers. Every server of a new
// cluster computes the same sorted set, so their first configurations agree.
import type { RaftNode, Transport } from '@registry/raft';
import type { Logger } from '../agent/logger';
import type { HelloReply, ServerFacts } from './server-info';
import type { LeftMarker } from './left-marker';
import { formingClusterConfiguration } from './forming-cluster';

const RETRY_MS = 1_000;
const CALL_TIMEOUT_MS = 1_000;

export class Joiner {
  private readonly known = new Map<string, ServerFacts>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly self: ServerFacts,
    private readonly raft: RaftNode,
    private readonly transport: Transport,
    private readonly logger: Logger,
    /** Set when this server left the cluster (`registry leave`); unset when it has joined again. */
    private readonly left?: LeftMarker,
  ) {
    this.known.set(self.id, self);
    transport.handle('cluster.hello', (body) => this.onHello(body as ServerFacts));
    transport.handle('cluster.join', (body) => this.onJoin(body as ServerFacts));
  }

  /** Voters this server has greeted or been greeted by: the candidates for a bootstrap set (never a non-voter). */
  private knownVoters(): ServerFacts[] {
    return [...this.known.values()].filter((s) => !s.nonVoter);
  }

  /** Start greeting `addresses` until this server is part of a cluster. */
  start(addresses: string[]): void {
    const tick = async () => {
      if (this.stopped) return;
      try {
        // A round under way when stop() is called must not join or bootstrap after it (a leaving server).
        const done = await this.attempt(addresses, () => this.stopped);
        if (done) return;
      } catch (err) {
        this.logger.debug({ err: (err as Error).message }, 'join attempt failed');
      }
      if (!this.stopped) this.timer = setTimeout(tick, RETRY_MS);
    };
    void tick();
  }

  /** The node name of a server this one has greeted or been greeted by. */
  nodeNameOf(id: string): string | undefined {
    return this.known.get(id)?.node;
  }

  /** The addresses of the other servers this one has greeted or been greeted by. */
  knownAddresses(): string[] {
    return [...this.known.values()].filter((s) => s.id !== this.self.id).map((s) => s.address);
  }

  /** Stops the -retry-join rounds, including one under way (a leaving server must not rejoin); `registry join` still works. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Greet every address (including ones that are not up yet) and return the replies. */
  async greet(addresses: string[]): Promise<HelloReply[]> {
    const replies = await Promise.all(
      addresses.map(async (address) => {
        try {
          const reply = (await this.transport.call(address, 'cluster.hello', this.self, CALL_TIMEOUT_MS)) as HelloReply;
          if (reply.datacenter !== this.self.datacenter) {
            this.logger.warn({ address, datacenter: reply.datacenter }, 'ignoring a server of another datacenter');
            return null;
          }
          this.known.set(reply.id, reply);
          return reply;
        } catch {
          return null;
        }
      }),
    );
    return replies.filter((r): r is HelloReply => r !== null);
  }

  /** One round; true once nothing more needs doing (or `cancelled()` says so once the greetings are back). */
  async attempt(addresses: string[], cancelled: () => boolean = () => false): Promise<boolean> {
    const replies = await this.greet(addresses);
    if (cancelled() || this.inCluster()) return true;
    const member = replies.find((r) => r.inCluster && r.leader);
    if (member?.leader) {
      await this.joinThrough(member.leader.address);
      this.logger.info({ leader: member.leader.address }, 'joined the cluster through its leader');
      return true;
    }
    const forming = this.self.bootstrapExpect > 0 && !this.self.nonVoter ? formingClusterConfiguration(this.self.id, replies) : null;
    if (forming && (await this.raft.bootstrap(forming))) {
      this.logger.info({ servers: forming.map((s) => s.address) }, 'bootstrapped alongside the servers forming the cluster');
      return true;
    }
    const expect = this.self.bootstrapExpect;
    const voters = expect > 0 && !this.self.nonVoter ? this.knownVoters() : [];
    if (expect > 0 && voters.length >= expect && !replies.some((r) => r.inCluster)) {
      const servers = voters
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((s) => ({ id: s.id, address: s.address }));
      if (await this.raft.bootstrap(servers)) {
        this.logger.info({ servers: servers.map((s) => s.address) }, 'bootstrapped the cluster');
      }
      return true;
    }
    return false;
  }

  /** Ask the leader at `address` to add this server (cluster.join); a server that had left is back. */
  async joinThrough(address: string): Promise<void> {
    await this.transport.call(address, 'cluster.join', this.self, CALL_TIMEOUT_MS * 5);
    this.left?.clear();
  }

  /**
   * Whether this server is a member of a cluster: its own id is in the Raft configuration and it has
   * not left. A server that left may still find itself in the configuration its log ends with.
   */
  inCluster(): boolean {
    return !this.left?.has() && this.raft.configuration().some((s) => s.id === this.self.id);
  }

  private onHello(from: ServerFacts): HelloReply {
    if (from.datacenter === this.self.datacenter) this.known.set(from.id, from);
    return { ...this.self, inCluster: this.inCluster(), leader: this.raft.leader(), lastIndex: this.raft.lastIndex(), servers: this.raft.configuration() };
  }

  private async onJoin(from: ServerFacts): Promise<boolean> {
    if (!this.raft.isLeader()) throw new Error('not the leader');
    if (this.raft.configuration().some((s) => s.id === from.id)) return true;
    await this.raft.addServer(from.nonVoter ? { id: from.id, address: from.address, learner: true } : { id: from.id, address: from.address });
    return true;
  }
}
