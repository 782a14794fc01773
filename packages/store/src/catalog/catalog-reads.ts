// The /v1/catalog reads over the catalog tables.
import type { IndexTable } from '../index-table';
import { queryResult, type QueryResult } from '../query-result';
import type { CatalogTable } from './catalog-table';
import { hasAllTags, hasNodeMetaFilter, matchesNodeMeta, sortByNames } from './filters';
import { connectWatchKey, NODES, nodeWatchKey, SERVICES, serviceWatchKey } from './keys';
import type { CatalogNodeOut, NodeOut, ServiceNodeOut } from './outputs';
import type { NodeRecord, ServiceRecord } from './records';
import { nodeOut, nodeServiceOut, serviceNodeOut } from './views';
import { listNodes } from './node-listing';
import { sortedInstances } from './instance-order';
import { keptCatalogService } from './kept-reads';
import type { ListingBuilds } from './listing-steps';

export interface NodeMetaQuery {
  nodeMeta?: Record<string, string>;
}

export interface ServiceQuery extends NodeMetaQuery {
  /** Instances must carry all of these tags (case-insensitive). */
  tags?: string[];
  /** Connect-capable instances instead: proxies for the service and its Connect-native instances. */
  connect?: boolean;
}

/** A service's instances matching a query, with their nodes, ordered by (node, service ID). */
export function selectInstances(
  catalog: CatalogTable,
  name: string,
  q: ServiceQuery,
): { instances: { node: NodeRecord; service: ServiceRecord }[]; keys: string[] } {
  // Already in (node, service ID) order (instance-order.ts), so filtering keeps it.
  const instances: { node: NodeRecord; service: ServiceRecord }[] = [];
  for (const service of sortedInstances(catalog, name, q.connect === true)) {
    const node = catalog.node(service.nodeKey);
    if (!node || !hasAllTags(service.Tags, q.tags) || !matchesNodeMeta(node.Meta, q.nodeMeta)) continue;
    instances.push({ node, service });
  }
  return { instances, keys: [q.connect ? connectWatchKey(name) : serviceWatchKey(name)] };
}

/** A node by name, else by node ID, with the watch keys covering the answer either way. */
export function findNode(catalog: CatalogTable, nameOrId: string): { node: NodeRecord | undefined; keys: string[] } {
  const node = catalog.node(nameOrId) ?? catalog.nodeById(nameOrId);
  // Unknown: the node may appear under this name (node:<name>) or, by ID, under any name (nodes).
  return { node, keys: node ? [nodeWatchKey(node.Node)] : [nodeWatchKey(nameOrId), NODES] };
}

/** The nodes in name order, as shared frozen objects (node-listing.ts: kept sorted, not rebuilt). */
export function catalogNodes(catalog: CatalogTable, indexes: IndexTable, builds: ListingBuilds, q: NodeMetaQuery): QueryResult<NodeOut[]> {
  const filtering = hasNodeMetaFilter(q.nodeMeta);
  return queryResult(indexes, [NODES], listNodes(catalog, builds, filtering ? (n) => matchesNodeMeta(n.Meta, q.nodeMeta) : undefined));
}

/** Service name → union of its instances' tags (first-seen order, no duplicates; [] when untagged). */
export function catalogServices(catalog: CatalogTable, indexes: IndexTable, q: NodeMetaQuery): QueryResult<Record<string, string[]>> {
  const filtering = hasNodeMetaFilter(q.nodeMeta);
  const instances = sortByNames(
    catalog.allServices().filter((s) => !filtering || matchesNodeMeta(catalog.node(s.nodeKey)?.Meta ?? null, q.nodeMeta)),
    (s) => [s.Service, s.nodeKey, s.ID],
  );
  const tags = new Map<string, Set<string>>();
  for (const s of instances) {
    let set = tags.get(s.Service);
    if (!set) tags.set(s.Service, (set = new Set()));
    for (const t of s.Tags) set.add(t);
  }
  const value: Record<string, string[]> = Object.create(null); // keyed by users' service names
  for (const [name, set] of tags) value[name] = [...set];
  return queryResult(indexes, filtering ? [SERVICES, NODES] : [SERVICES], value);
}

export function catalogService(catalog: CatalogTable, indexes: IndexTable, builds: ListingBuilds, name: string, q: ServiceQuery): QueryResult<ServiceNodeOut[]> {
  // Thousands of instances: a kept listing, first built in steps (kept-reads.ts).
  const kept = keptCatalogService(catalog, builds, name, q);
  if (kept !== undefined) return queryResult(indexes, [q.connect ? connectWatchKey(name) : serviceWatchKey(name)], kept);
  const { instances, keys } = selectInstances(catalog, name, q);
  return queryResult(indexes, keys, instances.map(({ node, service }) => serviceNodeOut(node, service)));
}

export function catalogNode(catalog: CatalogTable, indexes: IndexTable, nameOrId: string): QueryResult<CatalogNodeOut | null> {
  const { node, keys } = findNode(catalog, nameOrId);
  if (!node) return queryResult(indexes, keys, null);
  // Keyed by service IDs users chose: no prototype, so `constructor` or `__proto__` is an ID like any other.
  const services: CatalogNodeOut['Services'] = Object.create(null);
  for (const s of sortByNames(catalog.servicesOf(node.Node), (s) => [s.ID])) {
    services[s.ID] = nodeServiceOut(s);
  }
  return queryResult(indexes, keys, { Node: nodeOut(node), Services: services });
}
