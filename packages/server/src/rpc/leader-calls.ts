// Calls that must run on the leader (operator changes, session renewals, CA signing, adding a
// server): one typed method map, one way to serve a method, and one way to reach the leader.
// Errors cross with their kind intact (envelope.ts), so the same request fails the same way
// whichever server it entered. Writes to the state machine do not come here: they go through
// Rpc.apply, which gives them request ids.
import { NotLeaderError, type RaftNode, type Transport } from '@registry/raft';
import { NO_LEADER, noLeader, notAMember, serverError } from '../errors';
import { errorOf, toEnvelope, type Envelope } from './envelope';
import type { LeaderWait } from './leader-wait';
import { noRpcObserver, type RpcObserver } from './observer';
import { monotonicMs } from '../time';

/**
 * Method name → its argument and reply types. Each area adds its own methods by declaration merging
 * (`declare module '../rpc/leader-calls' { interface LeaderMethods { 'Area.Method': {...} } }`), so
 * the map stays typed end to end without this file importing the areas.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface LeaderMethods {}

export type LeaderMethod = keyof LeaderMethods;
export type LeaderArgs<M extends LeaderMethod> = LeaderMethods[M] extends { args: infer A } ? A : never;
type Reply<M extends LeaderMethod> = LeaderMethods[M] extends { reply: infer R } ? R : never;

/** How long a call waits for a leader to exist (Consul's RPCHoldTimeout). */
const LEADER_WAIT_MS = 7_000;
const CALL_TIMEOUT_MS = 10_000;

export class LeaderCalls {
  private readonly local = new Map<string, (args: never) => Promise<unknown>>();

  constructor(
    private readonly raft: RaftNode,
    private readonly transport: Transport,
    private readonly leaderWait: LeaderWait,
    private readonly observer: RpcObserver = noRpcObserver,
    /** Why this server is out of its cluster, or null (cluster/membership.ts): calls then fail at once. */
    private readonly outOfCluster: () => string | null = () => null,
  ) {}

  /** Serve `method` whenever this server leads; while it does not, callers are told to find the leader. */
  handle<M extends LeaderMethod>(method: M, serve: (args: LeaderArgs<M>) => Promise<Reply<M>>): void {
    // Counted where it runs, whichever server the call came from.
    const run = async (args: LeaderArgs<M>): Promise<Reply<M>> => {
      let ok = false;
      try {
        const reply = await serve(args);
        ok = true;
        return reply;
      } finally {
        this.observer.leaderCallServed(method, ok);
      }
    };
    this.local.set(method, run as (args: never) => Promise<unknown>);
    this.transport.handle(method, async (body): Promise<Envelope> => {
      if (!this.raft.isLeader()) return { ok: false, retry: true, message: NO_LEADER };
      try {
        return { ok: true, value: await run(body as LeaderArgs<M>) };
      } catch (err) {
        if (err instanceof NotLeaderError) return { ok: false, retry: true, message: NO_LEADER };
        return toEnvelope(err);
      }
    });
  }

  /**
   * Run `method` on the leader, here when this server leads. Only "not the leader" (surely not run)
   * is retried, after the next leader appears; any other answer is final.
   * `token` is the caller's: unused here, since a server's callers (its routes) have checked it
   * already; a client agent's ForwardingRpc sends it, for the server's gateway to check.
   */
  async call<M extends LeaderMethod>(method: M, args: LeaderArgs<M>, timeoutMs = CALL_TIMEOUT_MS, token?: string): Promise<Reply<M>> {
    const run = this.local.get(method);
    if (!run) throw serverError(`no leader method ${method}`);
    const out = this.raft.isLeader() ? null : this.outOfCluster();
    if (out) throw notAMember(out);
    const deadline = monotonicMs() + LEADER_WAIT_MS;
    for (;;) {
      if (this.raft.isLeader()) {
        try {
          return (await run(args as never)) as Reply<M>;
        } catch (err) {
          if (!(err instanceof NotLeaderError)) throw err;
        }
      } else {
        const leader = this.raft.leader();
        if (leader) {
          let env: Envelope;
          this.observer.forwarded('leader-call');
          try {
            env = (await this.transport.call(leader.address, method, args, timeoutMs)) as Envelope;
          } catch (err) {
            this.observer.forwardFailed('leader-call');
            throw serverError(`forwarding ${method} to the leader failed: ${(err as Error).message}`);
          }
          if (env.ok) return env.value as Reply<M>;
          if (!('retry' in env)) throw errorOf(env);
        }
      }
      if (monotonicMs() >= deadline) throw noLeader();
      await this.leaderWait.wait(Math.min(250, deadline - monotonicMs()));
    }
  }
}
