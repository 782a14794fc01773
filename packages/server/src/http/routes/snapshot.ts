// /v1/snapshot: save (GET) and restore (PUT) the whole replicated state as an archive
// (snapshot/archive.ts). Both are management-only, as Consul's (acl = "write").
import type { Authorizer } from '@registry/acl';
import { serverError } from '../../errors';
import { demand } from '../request-authorizer';
import { leaderCallAllowed } from '../../endpoints/leader-call-acl';
import { route, type Route } from '../route';
import type { RouteDeps } from './deps';

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
      // The body is read only once the token may restore, and then into a file (snapshot/archive-upload.ts).
      streamBody: true,
      async handle(ctx) {
        demand(deps, ctx, allowed);
        await snapshots().restore(ctx.bodyStream, contentLength(ctx.headers['content-length']), ctx.opts.token);
        return undefined;
      },
    }),
  ];
}

/** Content-Length as a number, or null when absent (chunked) or not a plain decimal. */
function contentLength(header: string | undefined): number | null {
  return header !== undefined && /^\d+$/.test(header) ? Number(header) : null;
}
