// A client agent's way to the servers: the RPC port of one server at a time, another one when it
// fails. It starts from -retry-join and learns the whole Raft configuration from each heartbeat
// reply. Every request a client sends may be re-sent to another server: reads change nothing, and a
// write carries its request id from the client, so the leader applies it once however often it came.
import { RemoteError, RpcConnectionError, type Transport } from '@registry/raft';
import { noLeader, outcomeUnknown, serverError } from '../errors';
import type { Envelope } from '../rpc/envelope';
import { monotonicMs } from '../time';

/** A pause between rounds over every server, so a datacenter that is down is not hammered. */
const ROUND_PAUSE_MS = 250;
/**
 * How long a server may take over a write: its own budget (rpc.ts, 7 s) and the time for its answer
 * to come back. After that the write goes to another server, with what is left of the budget.
 */
const SERVER_WRITE_MS = 8_000;

export class ServerLink {
  private servers: string[];
  private preferred = 0;
  private lastError = '';
  /** The log's time as a server last told it (0: never), and this process's monotonic time then. */
  private logTime = { at: 0, mono: 0 };

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
   * `address` failed a request: requests go to the next server — unless another request has already
   * moved on. Heartbeats and writes share the choice and run side by side; a failure reported late
   * (a call that waited its 9 s on a silent server) moved the choice one further each time, off a
   * server that had answered in the meantime and onto another silent one (test/client/
   * server-link.test.ts). Most likely why a client agent that reached one server of three did not
   * get a write through in 90 s once in CI (multi-host-partitions.test.ts).
   */
  private failed(address: string): void {
    if (this.current === address) this.preferred = (this.preferred + 1) % Math.max(1, this.servers.length);
  }

  /** `address` answered: requests keep going there. */
  private answered(address: string): void {
    const i = this.servers.indexOf(address);
    if (i >= 0) this.preferred = i;
  }

  /**
   * Learn the log's time from a server (its heartbeat reply). A copy of a write carries the log's
   * time it was sent at, so that a server reading it late — held in a black-holed link, delivered by
   * the kernel when the link healed — counts that time against its budget, as servers do among
   * themselves (rpc.ts). No clock of this host is compared with a server's: only durations here.
   */
  learnLogTime(ms: number | undefined): void {
    if (typeof ms === 'number' && Number.isFinite(ms) && ms > 0) this.logTime = { at: ms, mono: monotonicMs() };
  }

  /** The log's time now as this agent can tell it (0 while no server has said). */
  logTimeNow(): number {
    return this.logTime.at === 0 ? 0 : this.logTime.at + (monotonicMs() - this.logTime.mono);
  }

  /**
   * Send a write to a server, failing over as call() does, with the difference that a write may be
   * held by a server that did not answer: each attempt carries what is left of the write's budget
   * (`bodyFor(leftMs)`), so no server proposes or forwards it after the budget is spent, and once
   * the budget is spent or the client has gone it is not sent to another server. When an attempt
   * may have reached a server, the answer is that the outcome is unknown — never "not reachable".
   */
  async write<T = unknown>(method: string, bodyFor: (leftMs: number) => unknown, budgetMs: number, clientGone?: () => boolean): Promise<Envelope<T>> {
    const end = monotonicMs() + budgetMs;
    let maybeDelivered = false;
    let lastError = '';
    for (;;) {
      for (let tried = 0; tried < Math.max(1, this.servers.length); tried++) {
        const left = end - monotonicMs();
        if (left <= 0 || clientGone?.()) return this.writeGivenUp(maybeDelivered, lastError);
        const address = this.current;
        try {
          // Every copy left unanswered is reset off its connection, so the kernel cannot deliver
          // it when a black-holed link heals: the server's own check of a late copy needs the
          // log's time, which this agent may not know yet. (Only the budget's last attempt was
          // reset; a first copy from an agent cut off right after it joined, before any heartbeat
          // told it the log's time, arrived 17 s late with 15 s left on it and was applied after
          // its client had been told the outcome was unknown — multi-host-partitions.test.ts.)
          // A server that has not answered in SERVER_WRITE_MS is past its own budget anyway.
          const timeoutMs = Math.min(left, SERVER_WRITE_MS) + 1_000;
          const env = (await this.transport.call(address, method, bodyFor(left), timeoutMs, { discardOnTimeout: true })) as Envelope<T>;
          if (!('retry' in env)) this.answered(address);
          if (env.ok) return env;
          if (!('retry' in env)) {
            // This server's refusal says nothing of the copy an earlier one may still hold ("No
            // cluster leader" here while the paused server forwards it later): only the caller's
            // own mistakes (400, 403) are definite, since any copy would be refused alike.
            if (maybeDelivered && NOT_ABOUT_THE_WRITE.has(env.kind)) throw outcomeUnknown(env.message);
            return env;
          }
          lastError = env.message;
        } catch (err) {
          if (err instanceof RemoteError) throw serverError(`server ${address} refused ${method}: ${err.message}`);
          lastError = `${address}: ${(err as Error).message}`;
          if (!refusedAtConnect(err)) maybeDelivered = true;
        }
        this.failed(address);
      }
      await new Promise((r) => setTimeout(r, Math.min(ROUND_PAUSE_MS, Math.max(0, end - monotonicMs()))));
    }
  }

  private writeGivenUp(maybeDelivered: boolean, lastError: string): never {
    const servers = [...new Set([...this.servers, ...this.seeds])].join(', ');
    if (maybeDelivered) throw outcomeUnknown(`no answer from a registry server in time (${servers}): ${lastError}`);
    if (lastError) throw serverError(`no registry server reachable (${servers}): ${lastError}`);
    throw noLeader();
  }

  /**
   * Call `method` on a server; on a transport failure (connection lost or refused, no answer in
   * `timeoutMs`) try the next one, round after round, until `budgetMs` has passed. A server's
   * answer, success or error, is final. Never returns a retry envelope.
   */
  async call<T = unknown>(method: string, body: unknown, timeoutMs: number, budgetMs: number): Promise<Envelope<T>> {
    const deadline = monotonicMs() + budgetMs;
    for (;;) {
      for (let tried = 0; tried < Math.max(1, this.servers.length); tried++) {
        const address = this.current;
        try {
          const env = (await this.transport.call(address, method, body, timeoutMs)) as Envelope<T>;
          if (env.ok || !('retry' in env)) {
            this.answered(address);
            return env;
          }
          this.lastError = env.message;
        } catch (err) {
          // A server that answers "no such method" is not a registry server of this version.
          if (err instanceof RemoteError) throw serverError(`server ${address} refused ${method}: ${err.message}`);
          this.lastError = `${address}: ${(err as Error).message}`;
        }
        this.failed(address);
        if (monotonicMs() >= deadline) break;
      }
      if (monotonicMs() >= deadline) {
        // Consul's client answers "No known Consul servers" when it cannot reach any.
        if (this.lastError) throw serverError(`no registry server reachable (${[...new Set([...this.servers, ...this.seeds])].join(', ')}): ${this.lastError}`);
        throw noLeader();
      }
      await new Promise((r) => setTimeout(r, Math.min(ROUND_PAUSE_MS, Math.max(0, deadline - monotonicMs()))));
    }
  }
}

/** Refusals that are about the server's state, not the write's: another copy may still be applied. */
const NOT_ABOUT_THE_WRITE: ReadonlySet<string> = new Set(['NoLeader', 'OutcomeUnknown', 'Internal', 'TooManyRequests']);

/** Whether a call failed before its request could reach the server (nothing was delivered). */
function refusedAtConnect(err: unknown): boolean {
  return err instanceof RpcConnectionError && (err.cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED';
}
