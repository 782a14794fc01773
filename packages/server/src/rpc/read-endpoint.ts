// What every read endpoint receives and returns: the contract between the RPC layer (which runs
// reads with consistency, forwarding and blocking around them) and endpoints/ (which implement them).
import type { Authorizer } from '@registry/acl';
import type { Store } from '@registry/store';
import type { QueryResult } from './blocking';

export interface ReadContext {
  store: Store;
  /** The secret of the caller's token (ACL filtering uses it). */
  token: string | undefined;
  /** What the token may see: reads filter with it (lists omit, single objects 403). */
  authz: Authorizer;
}

export type ReadEndpoint<A = any> = (ctx: ReadContext, args: A) => QueryResult;
