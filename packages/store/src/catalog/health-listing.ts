// GET /v1/health/service/<name> over thousands of instances, kept up to date instead of rebuilt
// (issue #16). At 100,000 instances, selecting, sorting and shaping every entry took ~1 s of event
// loop per read after any write. Two things are kept instead:
//  - each instance's entry, made once per (node, service, the node's checks) and shared: records
//    are replaced on write, never changed, so an entry is still right while those are the same
//    objects. Entries are frozen (a change throws); the HTTP layer keeps the JSON bytes of runs of
//    them (http/sliced-json.ts);
//  - per service, the entries in (node, service ID) order, following the table's journal of
//    changed nodes (CatalogTable.nodeChangesSince): a changed node's rows are found by binary
//    search and replaced by its current instances. The full build is left for when the journal
//    cannot tell (first read, a restored table, thousands of changes).
import type { CatalogTable } from '../tables/catalog';
import { compareNames } from './filters';
import { connectTargets, fold } from './keys';
import type { CheckServiceNodeOut, HealthCheckOut } from './outputs';
import type { CheckRecord, NodeRecord, ServiceRecord } from './records';
import { sortedInstances } from './instance-order';
import { healthCheckOut, nodeOut, nodeServiceOut } from './views';

interface KeptEntry {
  node: NodeRecord;
  /** The node's check records (all of them, in the table's order) the entry was made from. */
  checks: CheckRecord[];
  out: CheckServiceNodeOut;
}

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

interface Row {
  /** fold(node name) \0 fold(service ID), the order of the answer. */
  key: string;
  out: CheckServiceNodeOut;
}

/** More changed nodes than this since the last read: one full build instead. */
const MAX_FOLLOWED = 512;

class HealthListing {
  private rows: Row[] = [];
  private outs: CheckServiceNodeOut[] = [];
  private version = -1;

  constructor(
    private readonly catalog: CatalogTable,
    /** Folded service name. */
    private readonly name: string,
    private readonly connect: boolean,
  ) {}

  /** Every instance's entry in (node, service ID) order. Do not modify. */
  update(): readonly CheckServiceNodeOut[] {
    const changes = this.catalog.nodeChangesSince(this.version);
    const changed = changes.keys === null || this.version < 0 ? null : new Set(changes.keys);
    if (changed !== null && changed.size <= MAX_FOLLOWED) {
      for (const nodeKey of changed) this.follow(nodeKey);
    } else {
      this.rebuild();
    }
    this.version = changes.version;
    return this.outs;
  }

  private shows(s: ServiceRecord): boolean {
    return this.connect ? connectTargets(s).includes(this.name) : fold(s.Service) === this.name;
  }

  private rebuild(): void {
    const rows: Row[] = [];
    for (const service of sortedInstances(this.catalog, this.name, this.connect)) {
      const node = this.catalog.node(service.nodeKey);
      if (node) rows.push({ key: `${service.nodeKey}\u0000${fold(service.ID)}`, out: healthEntry(this.catalog, node, service) });
    }
    this.rows = rows;
    this.outs = rows.map((r) => r.out);
  }

  /** Replaces the rows of node `nodeKey` by its current instances of the service. */
  private follow(nodeKey: string): void {
    const from = this.lowerBound(`${nodeKey}\u0000`);
    const to = this.lowerBound(`${nodeKey}\u0001`);
    const node = this.catalog.node(nodeKey);
    const fresh: Row[] = [];
    if (node) {
      for (const service of this.catalog.servicesOf(nodeKey)) {
        if (this.shows(service)) fresh.push({ key: `${nodeKey}\u0000${fold(service.ID)}`, out: healthEntry(this.catalog, node, service) });
      }
      fresh.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    }
    if (to === from && fresh.length === 0) return;
    this.rows.splice(from, to - from, ...fresh);
    this.outs.splice(from, to - from, ...fresh.map((r) => r.out));
  }

  /** First row whose key is ≥ `key`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.rows[mid].key < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  get empty(): boolean {
    return this.rows.length === 0;
  }
}

/** Per table (a restored store has new tables), per service name and kind of lookup. */
const listings = new WeakMap<CatalogTable, Map<string, HealthListing>>();

/** Every instance's health entry for service `name` (or its Connect-capable instances), in order. */
export function listHealth(catalog: CatalogTable, name: string, connect: boolean): CheckServiceNodeOut[] {
  let byName = listings.get(catalog);
  if (!byName) listings.set(catalog, (byName = new Map()));
  const folded = fold(name);
  const id = `${connect ? 'c' : 's'}:${folded}`;
  let listing = byName.get(id);
  if (!listing) byName.set(id, (listing = new HealthListing(catalog, folded, connect)));
  const outs = listing.update().slice();
  // Services come and go: a listing is forgotten with its last instance.
  if (listing.empty) byName.delete(id);
  return outs;
}
