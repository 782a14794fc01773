// A client agent's way to the servers: the RPC port of one server at a time, another one when it
// fails. It starts from -retry-join and learns the whole Raft configuration from each heartbeat
// reply. Every request a client sends may be re-sent to another server: reads change nothing, and a
// write carries its request id from the client, so the leader applies it once however often it came.
import { RemoteError, type Transport } from '@registry/raft';
import { noLeader, serverError } from '../errors';
import type { Envelope } from '../rpc/envelope';

/** A pause between rounds over every server, so a datacenter that is down is not hammered. */
const ROUND_PAUSE_MS = 250;

export class ServerLink {
  private servers: string[];
  private preferred = 0;
  private lastError = '';

  constructor(
    private readonly transport: Transport,
    private readonly seeds: string[],
  ) {
    this.servers = [...seeds];
  }

  /** The server requests go to first. */
  get current(): string {
    return this.servers[this.preferred % this.servers.length] ?? '';
  }

  get known(): readonly string[] {
    return this.servers;
  }

  /** Learn the servers from a heartbeat reply; the one in use stays in use while it is listed. */
  update(servers: string[]): void {
    if (servers.length === 0) return;
    const current = this.current;
    this.servers = [...servers];
    const i = this.servers.indexOf(current);
    this.preferred = i >= 0 ? i : 0;
  }

  /**
   * Call `method` on a server; on a transport failure (connection lost or refused, no answer in
   * `timeoutMs`) try the next one, round after round, until `budgetMs` has passed. A server's
   * answer, success or error, is final. Never returns a retry envelope.
   */
  async call<T = unknown>(method: string, body: unknown, timeoutMs: number, budgetMs: number): Promise<Envelope<T>> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      for (let tried = 0; tried < Math.max(1, this.servers.length); tried++) {
        const address = this.current;
        try {
          const env = (await this.transport.call(address, method, body, timeoutMs)) as Envelope<T>;
          if (env.ok || !('retry' in env)) return env;
          this.lastError = env.message;
        } catch (err) {
          // A server that answers "no such method" is not a registry server of this version.
          if (err instanceof RemoteError) throw serverError(`server ${address} refused ${method}: ${err.message}`);
          this.lastError = `${address}: ${(err as Error).message}`;
        }
        this.preferred = (this.preferred + 1) % Math.max(1, this.servers.length);
        if (Date.now() >= deadline) break;
      }
      if (Date.now() >= deadline) {
        // Consul's client answers "No known Consul servers" when it cannot reach any.
        if (this.lastError) throw serverError(`no registry server reachable (${[...new Set([...this.servers, ...this.seeds])].join(', ')}): ${this.lastError}`);
        throw noLeader();
      }
      await new Promise((r) => setTimeout(r, Math.min(ROUND_PAUSE_MS, Math.max(0, deadline - Date.now()))));
    }
  }
}
