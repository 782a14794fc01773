// The client agent's RPC layer (rpc/rpc-api.ts, the same interface as a server's Rpc): writes,
// reads and leader calls go to a live server over the RPC port (cluster/client-gateway.ts), which
// then takes the server path — forwarding to the leader, consistency modes, blocking, ACL checks.
// Nothing is decided here but which server to ask; the HTTP layer cannot tell it from a server.
import type { Command } from '@registry/store';
import type { AclResolver } from '../rpc/acl-resolver';
import { effectiveWait, type OpenQueries } from '../rpc/blocking';
import type { ApplyOptions, ReadArgs, ReadName, ReadReply, ReadValue } from '../rpc/contract';
import { fromEnvelope } from '../rpc/envelope';
import type { LeaderMethods, LeaderMethod } from '../rpc/leader-calls';
import type { QueryOptions } from '../rpc/query-options';
import { RequestIds } from '../rpc/request-ids';
import type { LeaderCallsApi, RpcApi } from '../rpc/rpc-api';
import type { ClientApply, ClientLeaderCall, ClientRead } from '../cluster/client-facts';
import type { ServerLink } from './server-link';

/** One attempt's wait for a server's answer to a non-blocking request (the server itself waits up to 7 s for a leader). */
const ATTEMPT_MS = 9_000;
/** The whole budget of a request, re-sends to other servers included. */
const BUDGET_MS = 15_000;

type Args<M extends LeaderMethod> = LeaderMethods[M] extends { args: infer A } ? A : never;
type Reply<M extends LeaderMethod> = LeaderMethods[M] extends { reply: infer R } ? R : never;

export class ForwardingRpc implements RpcApi {
  readonly blocking: OpenQueries = { open: 0 };
  readonly leader: LeaderCallsApi;
  private readonly ids = new RequestIds();

  constructor(
    private readonly link: ServerLink,
    readonly aclResolver: AclResolver,
  ) {
    // The token goes along: the server checks the method's rule against it (cluster/client-gateway.ts).
    const call = async <M extends LeaderMethod>(method: M, args: Args<M>, timeoutMs = ATTEMPT_MS, token?: string): Promise<Reply<M>> => {
      const req: ClientLeaderCall = { method, args, token };
      return fromEnvelope(await this.link.call<Reply<M>>('client.call', req, timeoutMs + 1_000, Math.max(BUDGET_MS, timeoutMs)));
    };
    // Nothing runs "on the leader" on a client: its parts that serve leader methods (the CA
    // signer, session timers) exist only on servers, so registering one here is a no-op.
    this.leader = { call, handle: () => undefined } as LeaderCallsApi;
  }

  /**
   * A write goes to a server with what is left of its budget, so that server forwards or proposes
   * it only while this agent could still answer its client (issue 31, finding 4: a server paused
   * with the write unread forwarded it 40 s later, after a newer write); it is not sent to another
   * server once the client has gone, and an answer whose outcome is unknown says so.
   */
  async apply(cmd: Command, options: ApplyOptions = {}): Promise<unknown> {
    const requestId = options.requestId ?? this.ids.next();
    const budget = Math.min(options.budgetMs ?? BUDGET_MS, BUDGET_MS);
    // Each copy says when it left, by the log's time, so that one held in a cut link and delivered
    // after it healed is not taken for a fresh write (server-link.ts, learnLogTime).
    const body = (budgetMs: number): ClientApply => {
      const sentAtLogMs = this.link.logTimeNow();
      return { cmd, token: options.token, internal: options.internal ?? false, requestId, budgetMs, ...(sentAtLogMs > 0 ? { sentAtLogMs } : {}) };
    };
    return fromEnvelope(await this.link.write('client.apply', body, budget, options.clientGone));
  }

  read<K extends ReadName>(name: K, args: ReadArgs<K>, opts: QueryOptions, signal?: AbortSignal): Promise<ReadReply<ReadValue<K>>> {
    return this.readByName(name, args, opts, signal) as Promise<ReadReply<ReadValue<K>>>;
  }

  /** A read named at run time (forwarded requests): what read() runs. */
  async readByName<T = unknown>(name: string, args: unknown, opts: QueryOptions, signal?: AbortSignal): Promise<ReadReply<T>> {
    const req: ClientRead = { endpoint: name, args, opts };
    const blocking = opts.minIndex > 0;
    // The server may hold a blocking query for its whole wait plus jitter (≤ wait/16): wait longer than that.
    const timeout = (blocking ? effectiveWait(opts.waitMs, () => 1) : 0) + ATTEMPT_MS;
    if (blocking) this.blocking.open++;
    try {
      const answer = this.link.call<ReadReply<T>>('client.read', req, timeout, timeout + BUDGET_MS);
      const reply = signal ? await abortable(answer, signal) : await answer;
      return fromEnvelope(reply);
    } finally {
      if (blocking) this.blocking.open--;
    }
  }
}

/** Stop waiting when the HTTP client goes away (the server's wait then ends on its own). */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('client went away'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('client went away'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
