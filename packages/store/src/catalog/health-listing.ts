// GET /v1/health/service/<name> over thousands of instances, kept up to date instead of rebuilt
// (issue #16). At 100,000 instances, selecting, sorting and shaping every entry took ~1 s of event
// loop per read after any write. Two things are kept instead:
//  - each instance's entry, made once per (node, service, the node's checks) and shared: records
//    are replaced on write, never changed, so an entry is still right while those are the same
//    objects. Entries are frozen (a change throws); the HTTP layer keeps the JSON bytes of runs of
//    them (http/sliced-json.ts);
//  - per service, the entries in (node, service ID) order (a NodeRows, node-rows.ts), following the table's journal of
//    changed nodes (CatalogTable.nodeChangesSince): a changed node's rows are found by binary
//    search and replaced by its current instances. The full build is left for when the journal
//    cannot tell (first read, a restored table, thousands of changes); that build runs in steps
//    a reader that can wait does not hold the event loop for (listing-steps.ts), from the
//    instances and the journal position taken when it started: writes made meanwhile are then
//    followed through the journal like any others.
import type { CatalogTable } from './catalog-table';
import { compareNames } from './filters';
import { fold } from './keys';
import type { CheckServiceNodeOut, HealthCheckOut } from './outputs';
import type { CheckRecord, NodeRecord, ServiceRecord } from './records';
import { NodeRows } from './node-rows';
import type { ListingBuilds } from './listing-steps';
import { ListingKey } from '../kept-listings';
import { serviceRows } from './service-rows';
import { healthCheckOut, nodeOut, nodeServiceOut } from './views';

interface KeptEntry {
  node: NodeRecord;
  /** The node's check records (all of them, in the table's order) the entry was made from. */
  checks: CheckRecord[];
  out: CheckServiceNodeOut;
}

/** Keyed by record, not per table: an entry is right while its records are, whichever listing shows it. */
const entries = new WeakMap<ServiceRecord, KeptEntry>();

function byCheckId(a: CheckRecord, b: CheckRecord): number {
  return compareNames([a.CheckID], [b.CheckID]);
}

function sameRecords(a: readonly CheckRecord[], b: readonly CheckRecord[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The instance's entry: its node, itself, then its node's checks and its own, each by check ID. */
export function healthEntry(catalog: CatalogTable, node: NodeRecord, service: ServiceRecord): CheckServiceNodeOut {
  const checks = catalog.checksOf(node.Node);
  const kept = entries.get(service);
  if (kept !== undefined && kept.node === node && sameRecords(kept.checks, checks)) return kept.out;
  const id = fold(service.ID);
  const nodeLevel = checks.filter((c) => c.serviceKey === '').sort(byCheckId);
  const own = checks.filter((c) => c.serviceKey === id).sort(byCheckId);
  const shown: HealthCheckOut[] = [...nodeLevel, ...own].map((c) => healthCheckOut(node, c, catalog.serviceOfCheck(c)));
  const out = Object.freeze({ Node: nodeOut(node), Service: nodeServiceOut(service), Checks: shown });
  entries.set(service, { node, checks, out });
  return out;
}

/** Kept on the table (CatalogTable.listings), per service name and kind of lookup. */
const HEALTH_LISTINGS = new ListingKey<Map<string, NodeRows<ServiceRecord, CheckServiceNodeOut>>>('health of services');

/** Every instance's health entry for service `name` (or its Connect-capable instances), in order. */
export function listHealth(catalog: CatalogTable, builds: ListingBuilds, name: string, connect: boolean): CheckServiceNodeOut[] {
  const byName = catalog.listings.of(HEALTH_LISTINGS, () => new Map());
  const folded = fold(name);
  const id = `${connect ? 'c' : 's'}:${folded}`;
  let listing = byName.get(id);
  if (!listing) byName.set(id, (listing = new NodeRows(catalog, serviceRows(catalog, folded, { connect }, (node, s) => healthEntry(catalog, node, s)), builds)));
  const outs = listing.update().slice();
  // Services come and go: a listing is forgotten with its last instance (not while it is built).
  if (listing.size === 0 && !listing.building) byName.delete(id);
  return outs;
}
