// The one place a request's token becomes an Authorizer. Reads get it in their ReadContext and
// filter; writes are checked on the leader, against the leader's state, by the endpoint of their
// area (endpoints/writes.ts, through rpc's WriteGate).
//
// In rpc/, not acl/: this is the port the RPC layer and the HTTP edge resolve tokens through, and
// acl/ (the store's resolver, the client's cache, the primary's fallback, replication) implements
// and builds on it — so rpc/ imports nothing of acl/, and the two folders no longer import each
// other (issue #26: no two-way folder pairs).
import { Authorizer } from '@registry/acl';

export interface AclResolver {
  /** The Authorizer for a token secret (undefined → anonymous); throws 403 `ACL not found`. */
  resolve(secret: string | undefined): Authorizer;
  readonly enabled: boolean;
  /**
   * Make `resolve(secret)` answer as it should, before it is asked: on a client agent, whose tokens
   * live on the servers, fetch the token when it is not cached or has expired (acl/cached-resolver.ts);
   * on a follower, catch up with the leader first when the secret is unknown here (store-resolver.ts).
   * Never throws: what the servers said (or the down policy) is what `resolve` then answers.
   * Undefined when there is nothing to wait for. The HTTP edge calls it once per request before the
   * route runs; other callers use resolveToken. `stale`: the request asked for this server's state
   * as it is (`?stale`), so a follower does not wait for the leader.
   */
  prepare?(secret: string | undefined, stale?: boolean): Promise<void> | undefined;
  /**
   * For a request that did not come through this agent's HTTP edge (forwarded by another server, or
   * from another datacenter): fetch what only another datacenter can say about the secret (a
   * secondary asking the primary, acl/primary-fallback-resolver.ts). Undefined when there is nothing
   * to fetch — always, except in a secondary datacenter for a token it does not hold.
   */
  prepareForwarded?(secret: string | undefined): Promise<void> | undefined;
}

/** ACLs disabled: everything is allowed. */
export const allowAllResolver: AclResolver = {
  enabled: false,
  resolve: () => Authorizer.allowAll(),
};

/** `resolve` for a secret the HTTP edge did not prepare (a prepared query's own token, say). */
export async function resolveToken(resolver: AclResolver, secret: string | undefined): Promise<Authorizer> {
  const prepared = resolver.prepare?.(secret);
  if (prepared) await prepared;
  return resolver.resolve(secret);
}
