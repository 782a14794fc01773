// What callers of the RPC layer pass and get back (rpc.ts), apart from the layer itself so that its
// ports (remote-datacenters.ts) can name them without importing it.
import type { QueryResult } from './blocking';
import type { ReadEndpoint } from './read-endpoint';

export interface ReadMeta {
  knownLeader: boolean;
  lastContactMs: number;
}

export interface ReadReply<T = unknown> {
  result: QueryResult<T>;
  meta: ReadMeta;
}

export interface ApplyOptions {
  /** The caller's token; the leader checks the command against it. */
  token?: string;
  datacenter?: string;
  /** Commands the servers issue themselves (reconcile, session expiry) skip ACL checks. */
  internal?: boolean;
  /** True once the client has gone away: the write is then not re-sent (it may be in flight already). */
  clientGone?: () => boolean;
  /** The write's identity when it entered the cluster elsewhere (another datacenter); else one is made here. */
  requestId?: string;
  /**
   * The write's whole budget in ms instead of the usual 7 s, for a write sized far beyond the usual
   * (a snapshot restore): one forwarded attempt may then also take that long, since re-sending
   * megabytes every 2 s would only add to the load that made it slow.
   */
  budgetMs?: number;
  /**
   * What is left of the budget of a write that entered elsewhere (a client agent), in ms when it
   * was sent: the write gets no more than that here, counted from when this server read it.
   */
  receivedBudgetMs?: number;
  /**
   * The log's time when the client agent sent this copy, as it could tell it (client/server-link.ts,
   * from its heartbeat replies): the time the copy spent on its way — held in a black-holed link and
   * delivered when it healed — is taken off the received budget, as between servers (rpc.ts).
   */
  receivedSentAtLogMs?: number;
}

/**
 * Every read endpoint by name, as its descriptor `read({ run: (ctx, args) => QueryResult<value>, ...policy })`
 * (read-endpoint.ts): filled in by endpoints/index.ts through declaration merging, so that
 * `rpc.read('health.service', args)` is typed end to end (name, args and the value of the reply)
 * while rpc/ names no area.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface ReadMethods {}

export type ReadName = keyof ReadMethods & string;

/** The args of read endpoint K. */
export type ReadArgs<K extends ReadName> = ReadMethods[K] extends ReadEndpoint<infer A> ? A : never;

/** The value in read endpoint K's result. */
export type ReadValue<K extends ReadName> = ReadMethods[K] extends ReadEndpoint<never, infer R>
  ? R extends { value: infer V } ? V : unknown
  : never;
