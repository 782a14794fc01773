// For routes that are neither replicated reads nor writes (agent and operator endpoints): the
// caller's Authorizer from this server's resolver, with the same 403/500 answers as everywhere.
import type { Authorizer } from '@registry/acl';
import { forbidden } from '../errors';
import type { RouteContext } from './route';
import type { RouteDeps } from './routes/deps';

export function requestAuthorizer(deps: RouteDeps, ctx: RouteContext<any, any, any>): Authorizer {
  return deps.rpc.aclResolver.resolve(ctx.opts.token);
}

/** 403 `Permission denied` unless `allowed(authz)`. */
export function demand(deps: RouteDeps, ctx: RouteContext<any, any, any>, allowed: (authz: Authorizer) => boolean): Authorizer {
  const authz = requestAuthorizer(deps, ctx);
  if (!allowed(authz)) throw forbidden();
  return authz;
}
