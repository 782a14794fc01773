// `GET /v1/agent/checks`: CheckID → HealthCheck, only what the token may read, from the agent's own
// checks with their latest results (and the catalog rows' indexes). Maintenance checks
// (maintenance.ts) are part of the agent's local state in Consul, so they are listed too, as the
// catalog holds them.
import type { Authorizer } from '@registry/acl';
import type { HealthCheckOut } from '@registry/store';
import { catalogCheckOf, type CheckSpec } from '../checks/check-spec';
import type { LocalService } from './local-services';
import { isMaintenanceCheckId } from './maintenance';

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function agentChecksOut(from: {
  node: string;
  /** The agent's checks by ID, with their latest results. */
  tracked: ReadonlyMap<string, { spec: CheckSpec; status: string; output: string }>;
  /** The catalog's rows for the node. */
  rows: readonly HealthCheckOut[];
  service: (id: string) => LocalService | undefined;
  authz: Authorizer;
}): Record<string, unknown> {
  const { node, tracked, authz } = from;
  const rows = new Map(from.rows.map((c) => [c.CheckID, c]));
  const out: Record<string, unknown> = Object.create(null); // keyed by users' check IDs
  const maintenance = [...rows.keys()].filter((id) => isMaintenanceCheckId(id) && !tracked.has(id));
  for (const id of [...tracked.keys(), ...maintenance].sort(byId)) {
    const t = tracked.get(id);
    if (!t) {
      const row = rows.get(id)!;
      if (row.ServiceID ? !authz.serviceRead(row.ServiceName) : !authz.nodeRead(node)) continue;
      out[id] = {
        Node: node,
        CheckID: id,
        Name: row.Name,
        Status: row.Status,
        Notes: row.Notes,
        Output: row.Output,
        ServiceID: row.ServiceID,
        ServiceName: row.ServiceName,
        ServiceTags: row.ServiceTags ?? [],
        Definition: row.Definition ?? {},
        CreateIndex: row.CreateIndex,
        ModifyIndex: row.ModifyIndex,
      };
      continue;
    }
    const service = t.spec.ServiceID ? from.service(t.spec.ServiceID) : undefined;
    if (service ? !authz.serviceRead(service.service.Service) : !authz.nodeRead(node)) continue;
    const row = rows.get(id);
    out[id] = {
      Node: node,
      CheckID: id,
      Name: t.spec.Name,
      Status: t.status,
      Notes: t.spec.Notes,
      Output: t.output,
      ServiceID: t.spec.ServiceID,
      ServiceName: service?.service.Service ?? '',
      ServiceTags: service?.service.Tags ?? [],
      Definition: row?.Definition ?? catalogCheckOf(t.spec, node, t.status, t.output).Definition,
      CreateIndex: row?.CreateIndex ?? 0,
      ModifyIndex: row?.ModifyIndex ?? 0,
    };
  }
  return out;
}
