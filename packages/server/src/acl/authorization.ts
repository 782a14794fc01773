// The one place a request's token becomes an Authorizer. Reads get it in their ReadContext and
// filter; writes are checked on the leader, against the leader's state, by the endpoint of their
// area (endpoints/writes.ts, through rpc's WriteGate).
import { Authorizer } from '@registry/acl';

export interface AclResolver {
  /** The Authorizer for a token secret (undefined → anonymous); throws 403 `ACL not found`. */
  resolve(secret: string | undefined): Authorizer;
  readonly enabled: boolean;
  /**
   * Only where tokens live elsewhere (a client agent asks the servers, acl/cached-resolver.ts):
   * make `resolve(secret)` answerable, fetching the token when it is not cached or has expired.
   * Never throws: what the servers said (or the down policy) is what `resolve` then answers. The
   * HTTP edge awaits it once per request before the route runs; other callers use resolveToken.
   */
  prepare?(secret: string | undefined): Promise<void>;
}

/** ACLs disabled: everything is allowed. */
export const allowAllResolver: AclResolver = {
  enabled: false,
  resolve: () => Authorizer.allowAll(),
};

/** `resolve` for a secret the HTTP edge did not prepare (a prepared query's own token, say). */
export async function resolveToken(resolver: AclResolver, secret: string | undefined): Promise<Authorizer> {
  if (resolver.prepare) await resolver.prepare(secret);
  return resolver.resolve(secret);
}
