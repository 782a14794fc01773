// A client agent's heartbeats: its facts sent to a server every interval (the servers say how
// often: a quarter of their client_heartbeat_timeout), which passes them on to the leader
// (cluster/client-liveness.ts). The reply names the servers and the leader, so the client learns
// where to go when the server it uses is lost. A failed heartbeat moves on to the next server.
import type { Logger } from '../runtime/logger';
import { fromEnvelope } from '../rpc/envelope';
import type { ClientFacts, HeartbeatReply } from '../cluster/client-facts';
import type { ServerLink } from './server-link';
import { monotonicMs } from '../time';

const FIRST_INTERVAL_MS = 1_000;
const ATTEMPT_MS = 2_000;

export class Heartbeats {
  private timer: NodeJS.Timeout | null = null;
  private intervalMs = FIRST_INTERVAL_MS;
  private stopped = false;
  /** The leader's RPC address as the last reply named it ('' when unknown). */
  leader = '';
  /** When the servers last answered (0: never). */
  lastContact = 0;
  /**
   * Since when no server answers (the last answer before the first failed beat), undefined while
   * they do: a beat already tries the next server, so one failure means none answered in time.
   */
  lostSince: number | undefined = undefined;
  private joinedOnce = false;

  constructor(
    private readonly link: ServerLink,
    private facts: ClientFacts,
    private readonly logger: Logger,
    /** Called after the first heartbeat the servers accepted (the node is in the catalog then). */
    private readonly onJoined: () => void,
  ) {}

  /** A reload's `node_meta`: sent with the next heartbeat, and the servers register the node again with it. */
  reload(nodeMeta: Record<string, string>): void {
    this.facts = { ...this.facts, nodeMeta };
  }

  start(): void {
    const loop = async () => {
      await this.beat();
      if (!this.stopped) this.timer = setTimeout(() => void loop(), this.intervalMs);
    };
    void loop();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One heartbeat; never throws. */
  async beat(): Promise<boolean> {
    try {
      const reply = fromEnvelope(await this.link.call<HeartbeatReply>('client.heartbeat', this.facts, ATTEMPT_MS, ATTEMPT_MS));
      this.link.update(reply.servers);
      this.link.learnLogTime(reply.logTimeMs);
      this.leader = reply.leader;
      this.intervalMs = reply.intervalMs;
      this.lastContact = monotonicMs();
      this.lostSince = undefined;
      if (!this.joinedOnce) {
        this.joinedOnce = true;
        this.logger.info({ server: this.link.current, servers: reply.servers }, 'joined the datacenter through its servers');
        this.onJoined();
      }
      return true;
    } catch (err) {
      if (this.joinedOnce) this.lostSince ??= this.lastContact;
      this.logger.warn({ err: (err as Error).message }, 'heartbeat failed; trying another server');
      return false;
    }
  }
}
