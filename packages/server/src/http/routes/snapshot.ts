// /v1/snapshot: save (GET) and restore (PUT) the whole replicated state as an archive
// (snapshot/archive.ts). Both are management-only, as Consul's (acl = "write").
import type { Authorizer } from '@registry/acl';
import { badRequest, NO_PATH_TO_DC, serverError } from '../../errors';
import { demand } from '../request-authorizer';
import { leaderCallAllowed } from '../../endpoints/leader-call-acl';
import { route, type Route } from '../route';
import type { RouteDeps } from './deps';

export function snapshotRoutes(deps: RouteDeps, datacenters: () => string[]): Route<any>[] {
  const snapshots = () => {
    if (!deps.snapshots) throw serverError('snapshots are not available on this agent');
    return deps.snapshots;
  };
  // Management only; with ACLs off anyone may (Consul checks nothing without an authorizer).
  const allowed = (a: Authorizer) => !deps.rpc.aclResolver.enabled || a.snapshot();
  // A save runs as the leader call Snapshot.Save: its rule (endpoints/leader-call-acl.ts).
  const mayRead = (a: Authorizer) => !deps.rpc.aclResolver.enabled || leaderCallAllowed('Snapshot.Save', a, null);
  // `?dc=` of a datacenter no area reaches is Consul's `No path to datacenter`; one an area does
  // reach is refused too: an archive is taken and restored by a server of its own datacenter
  // (registry does not stream archives over the WAN links; docs/conformance.md).
  const inThisDatacenter = (dc: string) => {
    if (dc.toLowerCase() === deps.agent.datacenter.toLowerCase()) return;
    if (!datacenters().some((d) => d.toLowerCase() === dc.toLowerCase())) throw serverError(NO_PATH_TO_DC);
    throw badRequest(`a snapshot of datacenter ${dc} is saved and restored through a server of ${dc}`);
  };
  return [
    route({
      method: 'GET',
      path: '/v1/snapshot',
      async handle(ctx) {
        demand(deps, ctx, mayRead);
        inThisDatacenter(ctx.opts.datacenter);
        const { archive, meta } = await snapshots().save(ctx.opts.consistency === 'stale');
        ctx.meta.index = meta.index;
        ctx.meta.knownLeader = true;
        ctx.meta.lastContactMs = meta.lastContactMs;
        ctx.meta.body = { contentType: 'application/gzip', data: archive };
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
        inThisDatacenter(ctx.opts.datacenter);
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
