// The /v1/health reads: checks joined with their nodes and services.
import type { IndexTable } from '../index-table';
import { queryResult, type QueryResult } from '../query-result';
import type { CatalogTable } from './catalog-table';
import { findNode, selectInstances, type NodeMetaQuery, type ServiceQuery } from './catalog-reads';
import { compareNames, hasNodeMetaFilter, matchesNodeMeta, sortByNames } from './filters';
import { CHECKS, connectWatchKey, fold, NODES, serviceWatchKey } from './keys';
import type { CheckServiceNodeOut, HealthCheckOut } from './outputs';
import { dropNonPassing } from './passing-filter';
import type { CheckRecord, NodeRecord } from './records';
import { healthEntry, listHealth } from './health-listing';
import { healthCheckOut } from './views';
import { keptHealthService, keptHealthState } from './kept-reads';
import type { ListingBuilds } from './listing-steps';

export interface HealthServiceQuery extends ServiceQuery {
  /** Drop instances with any check (node-level included) not passing. */
  passing?: boolean;
}

/** The status that means "every check" in health/state. */
export const ANY_STATE = 'any';

function byCheckId(a: CheckRecord, b: CheckRecord): number {
  return compareNames([a.CheckID], [b.CheckID]);
}

function showChecks(catalog: CatalogTable, node: NodeRecord, checks: CheckRecord[]): HealthCheckOut[] {
  return checks.map((c) => healthCheckOut(node, c, catalog.serviceOfCheck(c)));
}

/** Checks of many nodes, ordered by (node, check ID). */
function showChecksByNode(catalog: CatalogTable, checks: CheckRecord[]): HealthCheckOut[] {
  const out: { node: NodeRecord; check: CheckRecord }[] = [];
  for (const check of checks) {
    const node = catalog.node(check.nodeKey);
    if (node) out.push({ node, check });
  }
  return sortByNames(out, ({ node, check }) => [node.Node, check.CheckID]).map(({ node, check }) =>
    healthCheckOut(node, check, catalog.serviceOfCheck(check)),
  );
}

export function healthNode(catalog: CatalogTable, indexes: IndexTable, nameOrId: string): QueryResult<HealthCheckOut[]> {
  const { node, keys } = findNode(catalog, nameOrId);
  const value = node ? showChecks(catalog, node, catalog.checksOf(node.Node).sort(byCheckId)) : [];
  return queryResult(indexes, keys, value);
}

/** Every check belonging to an instance of `service`. */
export function healthChecks(catalog: CatalogTable, indexes: IndexTable, service: string, q: NodeMetaQuery): QueryResult<HealthCheckOut[]> {
  const checks: CheckRecord[] = [];
  for (const s of catalog.instancesNamed(service)) {
    if (!matchesNodeMeta(catalog.node(s.nodeKey)?.Meta ?? null, q.nodeMeta)) continue;
    const id = fold(s.ID);
    checks.push(...catalog.checksOf(s.nodeKey).filter((c) => c.serviceKey === id));
  }
  return queryResult(indexes, [serviceWatchKey(service)], showChecksByNode(catalog, checks));
}

export function healthService(catalog: CatalogTable, indexes: IndexTable, builds: ListingBuilds, name: string, q: HealthServiceQuery): QueryResult<CheckServiceNodeOut[]> {
  let entries: CheckServiceNodeOut[];
  let keys: string[];
  if ((q.tags ?? []).length === 0 && !hasNodeMetaFilter(q.nodeMeta)) {
    // Every instance: the kept listing (health-listing.ts).
    entries = listHealth(catalog, builds, name, q.connect === true);
    keys = [q.connect ? connectWatchKey(name) : serviceWatchKey(name)];
  } else {
    // Thousands of instances: a kept listing per filter, first built in steps (kept-reads.ts).
    const kept = keptHealthService(catalog, builds, name, q);
    if (kept !== undefined) {
      entries = kept;
      keys = [q.connect ? connectWatchKey(name) : serviceWatchKey(name)];
    } else {
      const selected = selectInstances(catalog, name, q);
      entries = selected.instances.map(({ node, service }) => healthEntry(catalog, node, service));
      keys = selected.keys;
    }
  }
  return queryResult(indexes, keys, q.passing ? dropNonPassing(entries) : entries);
}

/**
 * Every node's check with this ID (case-insensitive), ordered by node: found through the table's
 * check ID index, so its cost follows how many nodes carry the check, not how many nodes there are.
 */
export function healthChecksWithId(catalog: CatalogTable, indexes: IndexTable, checkId: string): QueryResult<HealthCheckOut[]> {
  return queryResult(indexes, [CHECKS], showChecksByNode(catalog, catalog.checksWithId(checkId)));
}

/** Checks whose Status equals `state` exactly ("any" for all), ordered by (node, check ID). */
export function healthState(catalog: CatalogTable, indexes: IndexTable, builds: ListingBuilds, state: string, q: NodeMetaQuery): QueryResult<HealthCheckOut[]> {
  const filtering = hasNodeMetaFilter(q.nodeMeta);
  const keys = filtering ? [CHECKS, NODES] : [CHECKS];
  // A large catalog: a kept listing per state and filter, first built in steps (kept-reads.ts).
  const kept = keptHealthState(catalog, builds, state, state === ANY_STATE, filtering ? q.nodeMeta : undefined);
  if (kept !== undefined) return queryResult(indexes, keys, kept);
  const checks = catalog
    .allChecks()
    .filter((c) => state === ANY_STATE || c.Status === state)
    .filter((c) => !filtering || matchesNodeMeta(catalog.node(c.nodeKey)?.Meta ?? null, q.nodeMeta));
  return queryResult(indexes, keys, showChecksByNode(catalog, checks));
}
