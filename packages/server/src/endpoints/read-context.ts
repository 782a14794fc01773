// What every read endpoint receives. A read endpoint is one function
// (context, args) → { index, value, keys }: blocking, consistency, forwarding and headers are
// done around it (rpc/rpc.ts, http/), never inside it.
import type { Authorizer } from '@registry/acl';
import type { Store } from '@registry/store';
import type { QueryResult } from '../http/blocking';

export interface ReadContext {
  store: Store;
  /** The secret of the caller's token (ACL filtering uses it). */
  token: string | undefined;
  /** What the token may see: reads filter with it (lists omit, single objects 403). */
  authz: Authorizer;
}

export type ReadEndpoint<A = any> = (ctx: ReadContext, args: A) => QueryResult;

/** Sorting by round-trip time from `near` (a node name, already resolved from `_agent`). */
export function sortNear<T>(store: Store, near: string | undefined, items: T[], nodeOf: (t: T) => string): T[] {
  if (!near) return items;
  return store.sortByDistance(near, items, nodeOf);
}
