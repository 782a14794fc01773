// /v1/snapshot: save (GET) and restore (PUT) the whole replicated state as an archive
// (snapshot/archive.ts). Both are management-only, as Consul's (acl = "write").
import type { Authorizer } from '@registry/acl';
import { serverError } from '../../errors';
import { demand } from '../request-authorizer';
import { leaderCallAllowed } from '../../endpoints/leader-call-acl';
import { route, type Route } from '../route';
import type { RouteDeps } from './deps';

/** A restore body may be this large (100k nodes archive to about 10 MiB; docs/benchmarks.md). */
export const SNAPSHOT_BODY_LIMIT = 512 * 1024 * 1024;

export function snapshotRoutes(deps: RouteDeps): Route<any>[] {
  const snapshots = () => {
    if (!deps.snapshots) throw serverError('snapshots are not available on this agent');
    return deps.snapshots;
  };
  // Management only; with ACLs off anyone may (Consul checks nothing without an authorizer).
  const allowed = (a: Authorizer) => !deps.rpc.aclResolver.enabled || a.snapshot();
  // A save runs as the leader call Snapshot.Save: its rule (endpoints/leader-call-acl.ts).
  const mayRead = (a: Authorizer) => !deps.rpc.aclResolver.enabled || leaderCallAllowed('Snapshot.Save', a, null);
  return [
    route({
      method: 'GET',
      path: '/v1/snapshot',
      async handle(ctx) {
        demand(deps, ctx, mayRead);
        const { archive, meta } = await snapshots().save(ctx.opts.consistency === 'stale');
        ctx.meta.index = meta.index;
        ctx.meta.knownLeader = true;
        ctx.meta.raw = { contentType: 'application/gzip', data: archive };
        return undefined;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/snapshot',
      bodyLimit: SNAPSHOT_BODY_LIMIT,
      async handle(ctx) {
        demand(deps, ctx, allowed);
        await snapshots().restore(ctx.rawBody ?? Buffer.alloc(0), ctx.opts.token);
        return undefined;
      },
    }),
  ];
}
