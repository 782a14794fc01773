// The one place a request's token becomes an Authorizer. Reads get it in their ReadContext and
// filter; writes are checked on the leader, against the leader's state, by the endpoint of their
// area (endpoints/writes.ts, through rpc's WriteGate).
import { Authorizer } from '@registry/acl';

export interface AclResolver {
  /** The Authorizer for a token secret (undefined → anonymous); throws 403 `ACL not found`. */
  resolve(secret: string | undefined): Authorizer;
  readonly enabled: boolean;
}

/** ACLs disabled: everything is allowed. */
export const allowAllResolver: AclResolver = {
  enabled: false,
  resolve: () => Authorizer.allowAll(),
};
