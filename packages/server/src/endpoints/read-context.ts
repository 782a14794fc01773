// What every read endpoint is made of. A read endpoint is a descriptor `read({ run, ...policy })`
// (rpc/read-endpoint.ts): `run(context, args) → { index, value, keys }` is the closure that checks the
// token and filters (re-run by blockingQuery after each change), and the policy says where the read
// is served (`forward`), whether `?index` blocks (`blocking`) and whether identical reads may share a
// result (`reuse`). rpc/rpc.ts carries out what the descriptor says; headers are http/'s.
import type { Store } from '@registry/store';
export { read } from '../rpc/read-endpoint';
export type { ReadContext, ReadEndpoint, ReadForward, ReadPolicy } from '../rpc/read-endpoint';

/** Sorting by round-trip time from `near` (a node name, already resolved from `_agent`). */
export function sortNear<T>(store: Store, near: string | undefined, items: T[], nodeOf: (t: T) => string): T[] {
  if (!near) return items;
  return store.sortByDistance(near, items, nodeOf);
}
