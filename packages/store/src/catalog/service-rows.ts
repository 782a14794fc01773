// The rows of one service's instances, in (node, service ID) order, as a kept listing shows them
// (node-rows.ts): shared by health/service unfiltered (health-listing.ts) and by catalog/service and
// filtered health/service (kept-reads.ts), which differ only in the filter and the output shape.
import type { CatalogTable } from './catalog-table';
import { hasAllTags, matchesNodeMeta } from './filters';
import { connectTargets, fold } from './keys';
import type { Row, RowSource } from './node-rows';
import type { NodeRecord, ServiceRecord } from './records';

export interface InstanceFilter {
  tags?: string[];
  nodeMeta?: Record<string, string>;
  connect?: boolean;
}

/** Instances of service `name` (or those Connect-capable for it) that pass `q`, each shaped by `shape`. */
export function serviceRows<T>(
  catalog: CatalogTable,
  name: string,
  q: InstanceFilter,
  shape: (node: NodeRecord, s: ServiceRecord) => T,
): RowSource<ServiceRecord, T> {
  const folded = fold(name);
  const connect = q.connect === true;
  const row = (s: ServiceRecord): Row<T> | undefined => {
    const node = catalog.node(s.nodeKey);
    if (!node || !hasAllTags(s.Tags, q.tags) || !matchesNodeMeta(node.Meta, q.nodeMeta)) return undefined;
    return { key: `${s.nodeKey}\u0000${fold(s.ID)}`, out: shape(node, s) };
  };
  const shows = (s: ServiceRecord) => (connect ? connectTargets(s).includes(folded) : fold(s.Service) === folded);
  return {
    items: () => (connect ? catalog.connectInstances(name) : catalog.instancesNamed(name)),
    row,
    rowsOfNode: (nodeKey) => catalog.servicesOf(nodeKey).flatMap((s) => (shows(s) ? (row(s) ?? []) : [])),
  };
}
