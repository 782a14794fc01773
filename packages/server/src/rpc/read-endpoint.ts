// What a read endpoint is: the contract between the RPC layer, which owns the mechanism (forwarding to
// the leader or another datacenter, consistency modes, blockingQuery, shared results), and endpoints/,
// where each read declares which of that mechanism it wants. Consul writes this per endpoint
// (agent/consul/<area>_endpoint.go: `s.forward(...)`, ACL, `s.blockingQuery(..., closure)`); here an
// endpoint is a small descriptor made with `read({...})` and rpc.ts reads it, so the policy of a read
// is in its area's file and rpc/ names no endpoint.
import type { Authorizer } from '@registry/acl';
import type { Store } from '@registry/store';
import { badRequest } from '../errors';
import type { QueryResult } from './blocking';
import type { QueryOptions } from './query-options';

export interface ReadContext {
  store: Store;
  /** The secret of the caller's token (ACL filtering uses it). */
  token: string | undefined;
  /** What the token may see: reads filter with it (lists omit, single objects 403). */
  authz: Authorizer;
}

/**
 * Which server answers, and how fresh the answer must be.
 * - `by-consistency`: as the request asks (Consul's ordinary read): `?stale` this server's store,
 *   default the leader's freshness, `?consistent` a ReadIndex barrier first; `?dc` another datacenter.
 * - `leader`: the leader's freshness whatever the request asks (`?stale`/`?consistent` ignored): a
 *   read whose answer is acted upon on the leader right after (session renew), as Consul forwards
 *   such calls without honouring AllowStale.
 * - `local`: this server's store as it is, never forwarded and never another datacenter (`?dc` is a
 *   400): state the agent answers from its own copy, as Consul's agent answers from its event buffer.
 */
export type ReadForward = 'by-consistency' | 'leader' | 'local';

export interface ReadPolicy {
  readonly forward: ReadForward;
  /**
   * Whether `?index` makes the read wait for a change (Consul's blockingQuery). False for reads that
   * answer at once whatever the index (Consul's endpoints that do not call blockingQuery).
   */
  readonly blocking: boolean;
  /**
   * Whether identical non-blocking reads share one result, and one JSON encoding, until the next
   * apply (reused-reads.ts). Only for endpoints whose routes return the value untouched.
   */
  readonly reuse: boolean;
}

/** The read itself: the closure blockingQuery re-runs; ACL checks and filtering happen inside it. */
export type ReadRun<A = any, R extends QueryResult = QueryResult> = (ctx: ReadContext, args: A) => R;

/** One read endpoint: its closure and its policy. */
export interface ReadEndpoint<A = any, R extends QueryResult = QueryResult> extends ReadPolicy {
  readonly run: ReadRun<A, R>;
}

/** What `read()` takes: the closure, and any policy that is not the ordinary read's. */
export type ReadSpec<A, R extends QueryResult> = { run: ReadRun<A, R> } & Partial<ReadPolicy>;

/** The ordinary read: served as the request's consistency asks, blocking on `?index`, never shared. */
export const ORDINARY_READ: ReadPolicy = { forward: 'by-consistency', blocking: true, reuse: false };

/**
 * A read endpoint with the ordinary read's policy unless the spec says otherwise. Args and result are
 * inferred from `run`, so `rpc.read(name, args)` is typed by the endpoint (contract.ts).
 */
export function read<A = unknown, R extends QueryResult = QueryResult>(spec: ReadSpec<A, R>): ReadEndpoint<A, R> {
  return Object.freeze({
    run: spec.run,
    forward: spec.forward ?? ORDINARY_READ.forward,
    blocking: spec.blocking ?? ORDINARY_READ.blocking,
    reuse: spec.reuse ?? ORDINARY_READ.reuse,
  });
}

/**
 * The options a read runs with: what the request asked, with the endpoint's policy applied. Pure, so
 * that every server (and the one a client agent or another datacenter forwards to) decides alike.
 * Throws BadRequest for `?dc` on a `local` read.
 */
export function applyReadPolicy(policy: ReadPolicy, name: string, asked: QueryOptions, ownDatacenter: string): QueryOptions {
  let opts = asked;
  if (!policy.blocking && opts.minIndex !== 0) opts = { ...opts, minIndex: 0 };
  if (policy.forward === 'leader' && opts.consistency !== 'default') opts = { ...opts, consistency: 'default' };
  if (policy.forward === 'local') {
    if (opts.datacenter !== ownDatacenter) throw badRequest(`${name} is local to the agent: dc is not supported`);
    if (opts.consistency !== 'stale') opts = { ...opts, consistency: 'stale' };
  }
  return opts;
}
