// The large cases of catalog/service, filtered health/service and health/state, answered from kept
// listings built in steps (node-rows.ts, issue #16). Small ones are made anew each read, as before:
// both ways give the same rows in the same order — (node, service ID) or (node, check ID), folded —
// so which one answers never shows.
import type { CatalogTable } from './catalog-table';
import { matchesNodeMeta } from './filters';
import { fold } from './keys';
import { healthEntry } from './health-listing';
import { hasKeptRows, keptRows, KEPT_ROWS_MIN, type Row } from './node-rows';
import type { CheckServiceNodeOut, HealthCheckOut, ServiceNodeOut } from './outputs';
import type { CheckRecord, NodeRecord, ServiceRecord } from './records';
import { serviceRows, type InstanceFilter } from './service-rows';
import type { ListingBuilds } from './listing-steps';
import { healthCheckOut, serviceNodeOut } from './views';

export type { InstanceFilter } from './service-rows';

/**
 * Outputs shared by every kept listing showing the same records (one per filter would multiply
 * them): records are replaced on write, never changed, so an output is right while they are the
 * same objects. Frozen: a caller changing one would show to every other. Keyed by record, not per
 * table: an output is right while its records are, whichever table or listing shows it.
 */
const catalogOuts = new WeakMap<ServiceRecord, { node: NodeRecord; out: ServiceNodeOut }>();
const checkOuts = new WeakMap<CheckRecord, { node: NodeRecord; service: ServiceRecord | undefined; out: HealthCheckOut }>();

function catalogEntry(node: NodeRecord, s: ServiceRecord): ServiceNodeOut {
  const kept = catalogOuts.get(s);
  if (kept !== undefined && kept.node === node) return kept.out;
  const out = Object.freeze(serviceNodeOut(node, s));
  catalogOuts.set(s, { node, out });
  return out;
}

function checkEntry(catalog: CatalogTable, node: NodeRecord, c: CheckRecord): HealthCheckOut {
  const service = catalog.serviceOfCheck(c);
  const kept = checkOuts.get(c);
  if (kept !== undefined && kept.node === node && kept.service === service) return kept.out;
  const out = Object.freeze(healthCheckOut(node, c, service));
  checkOuts.set(c, { node, service, out });
  return out;
}

function queryId(kind: string, name: string, q: InstanceFilter): string {
  return JSON.stringify([kind, q.connect === true, fold(name), q.tags ?? [], q.nodeMeta ?? {}]);
}

/** Whether a read of this service is large enough to keep (or is kept already). */
function keepsService(catalog: CatalogTable, id: string, name: string, q: InstanceFilter): boolean {
  return hasKeptRows(catalog, id) || catalog.instanceCount(name, q.connect === true) >= KEPT_ROWS_MIN;
}

/** catalog/service's rows when the service is large, else undefined (read it anew). */
export function keptCatalogService(catalog: CatalogTable, builds: ListingBuilds, name: string, q: InstanceFilter): ServiceNodeOut[] | undefined {
  const id = queryId('catalog.service', name, q);
  if (!keepsService(catalog, id, name, q)) return undefined;
  return keptRows(catalog, builds, id, () => serviceRows(catalog, name, q, catalogEntry));
}

/** A filtered health/service's entries when the service is large, else undefined. */
export function keptHealthService(catalog: CatalogTable, builds: ListingBuilds, name: string, q: InstanceFilter): CheckServiceNodeOut[] | undefined {
  const id = queryId('health.service', name, q);
  if (!keepsService(catalog, id, name, q)) return undefined;
  return keptRows(catalog, builds, id, () => serviceRows(catalog, name, q, (node, s) => healthEntry(catalog, node, s)));
}

/** health/state's checks when the catalog is large, else undefined. `state` is a status or "any". */
export function keptHealthState(
  catalog: CatalogTable,
  builds: ListingBuilds,
  state: string,
  anyState: boolean,
  nodeMeta: Record<string, string> | undefined,
): HealthCheckOut[] | undefined {
  const id = JSON.stringify(['health.state', anyState ? null : state, nodeMeta ?? {}]);
  if (!hasKeptRows(catalog, id) && catalog.nodeCount < KEPT_ROWS_MIN) return undefined;
  const row = (c: CheckRecord): Row<HealthCheckOut> | undefined => {
    if (!anyState && c.Status !== state) return undefined;
    const node = catalog.node(c.nodeKey);
    if (!node || !matchesNodeMeta(node.Meta, nodeMeta)) return undefined;
    return { key: `${c.nodeKey}\u0000${fold(c.CheckID)}`, out: checkEntry(catalog, node, c) };
  };
  return keptRows(catalog, builds, id, () => ({
    items: () => catalog.allChecks(),
    row,
    rowsOfNode: (nodeKey: string) => catalog.checksOf(nodeKey).flatMap((c) => row(c) ?? []),
  }));
}
