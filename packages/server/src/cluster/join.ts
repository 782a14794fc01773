// Forming and joining a cluster (Consul's -bootstrap-expect and -retry-join, without gossip):
// servers greet the addresses they were given; a server with no Raft state either joins an
// existing cluster through its leader, or — once it knows `bootstrap-expect` servers and none of
// them is in a cluster yet — bootstraps Raft with exactly those servers. Every server of a new
// cluster computes the same sorted set, so their first configurations agree.
import { isUnspecifiedHost, senderAddress, splitHostPort, type Caller, type RaftNode, type Transport } from '@registry/raft';
import type { Logger } from '../runtime/logger';
import type { HelloReply, ServerFacts } from './server-info';
import type { Membership } from './membership';
import { formingClusterConfiguration } from './forming-cluster';
import { admitServer } from './add-server';
import { promoteWhenCaughtUp } from './promote-caught-up';

const RETRY_MS = 1_000;
const CALL_TIMEOUT_MS = 1_000;
/** How long cluster.join waits for a new server to catch up and become a voter (within the call's 5 s); it asks again after. */
const PROMOTE_WAIT_MS = 3_000;

export class Joiner {
  private readonly known = new Map<string, ServerFacts>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly self: ServerFacts,
    private readonly raft: RaftNode,
    private readonly transport: Transport,
    private readonly logger: Logger,
    /** Whether this server left or was removed (membership.ts); cleared when it has joined again. */
    private readonly membership?: Pick<Membership, 'isOut' | 'rejoined'>,
    /** The node name of a server in the configuration as the catalog holds it, when it does. */
    private readonly catalogNodeName: (id: string) => string | undefined = () => undefined,
  ) {
    this.known.set(self.id, self);
    // A sender is recorded by an address others can dial: a wildcard or loopback claim from another
    // host is replaced by the connection's source (raft transport/sender-address.ts).
    transport.handle('cluster.hello', (body, caller) => this.onHello(reachable(body as ServerFacts, caller)));
    transport.handle('cluster.join', (body, caller) => this.onJoin(reachable(body as ServerFacts, caller)));
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

  private memberNodeName(id: string): string | undefined {
    return this.catalogNodeName(id) ?? this.known.get(id)?.node;
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
          // A server that names itself by a wildcard (one from before issue #25) is reached where we dialled it.
          if (isUnspecifiedHost(splitHostPort(reply.address)?.host ?? reply.address)) reply.address = address;
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
    if (cancelled() || (this.inCluster() && this.hasItsRole())) return true;
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
    this.membership?.rejoined();
  }

  /**
   * Whether this server is a member of a cluster: its own id is in the Raft configuration and it has
   * neither left nor been told by the leader that it was removed. A server that left or was removed
   * may still find itself in the configuration its log ends with (membership.ts).
   */
  inCluster(): boolean {
    return !this.membership?.isOut() && this.raft.configuration().some((s) => s.id === this.self.id);
  }

  /**
   * Whether this server is in the configuration as what it declares: a voter, unless `-non-voter`. A
   * new server is added as a non-voter first (onJoin); one still waiting to be made a voter — the
   * leader that added it lost leadership, or it had not caught up within the join call — asks again.
   */
  private hasItsRole(): boolean {
    return this.self.nonVoter === true || this.raft.configuration().some((s) => s.id === this.self.id && !s.learner);
  }

  private onHello(from: ServerFacts): HelloReply {
    if (from.datacenter === this.self.datacenter) this.known.set(from.id, from);
    return { ...this.self, inCluster: this.inCluster(), leader: this.raft.leader(), lastIndex: this.raft.lastIndex(), servers: this.raft.configuration() };
  }

  /**
   * The leader adds a server that asks to join. A new id with the address or node name of a member
   * is that member's replacement (a server back with an empty data dir, issue #25): the stale member
   * is removed first, each change committed before the next, so the voters never outnumber what the
   * live servers can carry (Consul's leader does the same for a duplicate address). A member that
   * joins again from another address keeps its id and role; only its address changes.
   *
   * A new server comes in as a non-voter and is made a voter once it has caught up, as Consul's
   * autopilot does with raft protocol 3. Added as a voter at once, a joiner that did not answer
   * within an election timeout (a server still starting on a loaded machine) counted against the
   * quorum: beside one dead voter that was two live of four, the leader stepped down, and — a new
   * server votes only once it has caught up with a leader — no leader could be elected again
   * (dead-server-cleanup in CI). A joiner that stops asking before it is promoted is promoted by
   * the leader's autopilot pass instead (learner-autopilot.ts), by the same rule (promote-caught-up.ts).
   */
  private async onJoin(from: ServerFacts): Promise<boolean> {
    if (!this.raft.isLeader()) throw new Error('not the leader');
    const configuration = this.raft.configuration();
    const member = configuration.find((s) => s.id === from.id);
    const toPromote = from.nonVoter !== true && (member?.learner ?? true);
    if (member && member.address === from.address) {
      if (toPromote) await promoteWhenCaughtUp(this.raft, from.id, PROMOTE_WAIT_MS);
      return true;
    }
    const stale = configuration.filter((s) => s.id !== from.id && (s.address === from.address || (from.node !== '' && this.memberNodeName(s.id) === from.node)));
    if (stale.some((s) => s.id === this.self.id)) {
      throw new Error(`server ${from.id} claims the address or node name of the leader (${this.self.address}, ${this.self.node})`);
    }
    for (const old of stale) {
      this.logger.info({ removed: old.id, address: old.address, replacement: from.id, node: from.node }, 'removing the server a joining server replaces');
      await this.raft.removeServer(old.id);
    }
    await admitServer(this.raft, from);
    if (toPromote) await promoteWhenCaughtUp(this.raft, from.id, PROMOTE_WAIT_MS);
    return true;
  }
}

/** Facts whose address has been checked against the connection they came on (sender-address.ts). */
function reachable(facts: ServerFacts, caller: Caller): ServerFacts {
  const address = senderAddress(facts.address, caller.remoteHost);
  return address === undefined || address === facts.address ? facts : { ...facts, address };
}
