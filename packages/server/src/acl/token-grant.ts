// What a server tells a client agent about a token it was asked to resolve (the read endpoint
// `acl.token-resolve`, Consul's ACL.TokenRead + ACL.PolicyResolve in one): the policies the token
// links, with their rules and datacenters, so that the client builds the same Authorizer the
// servers would (acl/cached-resolver.ts). Holding the secret is the only privilege needed.
import type { ResolvablePolicy } from '@registry/acl';

export interface GrantedPolicy extends ResolvablePolicy {
  ID: string;
}

export interface TokenGrant {
  /** The token's policies that still exist, in link order. */
  policies: GrantedPolicy[];
  /** A legacy token's Type (client|management) and Rules, which grant as one more policy. */
  legacy?: { Type: string; Rules: string };
}
