// What every read endpoint receives. A read endpoint is one function
// (context, args) → { index, value, keys }: blocking, consistency, forwarding and headers are
// done around it (rpc/rpc.ts, http/), never inside it.
import type { Store } from '@registry/store';
export type { ReadContext, ReadEndpoint } from '../rpc/read-endpoint';

/** Sorting by round-trip time from `near` (a node name, already resolved from `_agent`). */
export function sortNear<T>(store: Store, near: string | undefined, items: T[], nodeOf: (t: T) => string): T[] {
  if (!near) return items;
  return store.sortByDistance(near, items, nodeOf);
}
