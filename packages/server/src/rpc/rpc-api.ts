// What the layers above rpc/ may call (the HTTP routes, DNS, the agent's Connect side and local state): one
// interface with two implementations. On a server it is `Rpc` (rpc.ts: Raft, forwarding to the
// leader, consistency modes); on a client agent it is `ForwardingRpc` (client/forwarding-rpc.ts:
// every request sent to a live server, which then takes the server path). The edge never knows
// which one it runs on.
import type { ApplyOptions, ReadArgs, ReadName, ReadReply, ReadValue } from './contract';
import type { OpenQueries } from './blocking';
import type { QueryOptions } from './query-options';
import type { AclResolver } from './acl-resolver';
import type { LeaderCalls } from './leader-calls';
import type { Command } from '@registry/store';

/** Running calls on the leader (and, on a server, serving them). */
export type LeaderCallsApi = Pick<LeaderCalls, 'call' | 'handle'>;

export interface RpcApi {
  apply(cmd: Command, options?: ApplyOptions): Promise<unknown>;
  /** Read endpoint `name` (endpoints/), typed by the endpoint itself: its args and its value. */
  read<K extends ReadName>(name: K, args: ReadArgs<K>, opts: QueryOptions, signal?: AbortSignal): Promise<ReadReply<ReadValue<K>>>;
  /** A read named at run time (a request forwarded from a client agent or another datacenter). */
  readByName<T = unknown>(name: string, args: unknown, opts: QueryOptions, signal?: AbortSignal): Promise<ReadReply<T>>;
  readonly leader: LeaderCallsApi;
  /** The resolver agent-local routes check their tokens with. */
  readonly aclResolver: AclResolver;
  /** Blocking queries waiting here now (metrics). */
  readonly blocking: OpenQueries;
}
