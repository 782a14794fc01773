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
//    cannot tell (first read, a restored table, thousands of changes); that build runs in steps
//    a reader that can wait does not hold the event loop for (listing-steps.ts), from the
//    instances and the journal position taken when it started: writes made meanwhile are then
//    followed through the journal like any others.
import type { CatalogTable } from '../tables/catalog';
import { compareNames } from './filters';
import { connectTargets, fold } from './keys';
import type { CheckServiceNodeOut, HealthCheckOut } from './outputs';
import type { CheckRecord, NodeRecord, ServiceRecord } from './records';
import { resultOf, ROWS_PER_YIELD, SLICED_BUILD_MIN, SlicedBuild, sortInSteps, type BuildSteps } from './listing-steps';
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

const ENTRIES_PER_YIELD = 32;

function byKey(a: Row, b: Row): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

interface Built {
  rows: Row[];
  outs: CheckServiceNodeOut[];
}

/**
 * The rows of `instances` in (node, service ID) order, made and sorted in steps. A node or check
 * changed between two steps may be seen in its newer state: the journal names that node, and the
 * listing follows it after the build, so its rows end up as the table holds them.
 */
function* buildRows(catalog: CatalogTable, instances: readonly ServiceRecord[]): BuildSteps<Built> {
  const made: Row[] = [];
  for (let i = 0; i < instances.length; i++) {
    const service = instances[i];
    const node = catalog.node(service.nodeKey);
    if (node) made.push({ key: `${service.nodeKey}\u0000${fold(service.ID)}`, out: healthEntry(catalog, node, service) });
    // An entry costs ~10–20 µs to make (node, service and checks shaped): yield more often.
    if (i % ENTRIES_PER_YIELD === ENTRIES_PER_YIELD - 1) yield;
  }
  const rows = yield* sortInSteps(made, byKey);
  const outs: CheckServiceNodeOut[] = new Array<CheckServiceNodeOut>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    outs[i] = rows[i].out;
    if (i % (ROWS_PER_YIELD * 8) === ROWS_PER_YIELD * 8 - 1) yield;
  }
  return { rows, outs };
}

class HealthListing {
  private rows: Row[] = [];
  private outs: CheckServiceNodeOut[] = [];
  private version = -1;
  /** A full build while it runs in steps; `version`: the table's when it took the instances. */
  private build: { steps: SlicedBuild<Built>; version: number } | undefined;

  constructor(
    private readonly catalog: CatalogTable,
    /** Folded service name. */
    private readonly name: string,
    private readonly connect: boolean,
  ) {}

  /**
   * Every instance's entry in (node, service ID) order. Do not modify. Throws BuildPending (inside
   * deferringBuilds) while a full build runs in steps.
   */
  update(): readonly CheckServiceNodeOut[] {
    for (;;) {
      if (this.build !== undefined) this.install(this.build);
      const changes = this.catalog.nodeChangesSince(this.version);
      const changed = changes.keys === null || this.version < 0 ? null : new Set(changes.keys);
      if (changed !== null && changed.size <= MAX_FOLLOWED) {
        for (const nodeKey of changed) this.follow(nodeKey);
        this.version = changes.version;
        return this.outs;
      }
      // Built from scratch, then (next turn of this loop) the changes made during the build followed.
      this.startBuild(changes.version);
    }
  }

  private shows(s: ServiceRecord): boolean {
    return this.connect ? connectTargets(s).includes(this.name) : fold(s.Service) === this.name;
  }

  private startBuild(version: number): void {
    const instances = this.connect ? this.catalog.connectInstances(this.name) : this.catalog.instancesNamed(this.name);
    const steps = new SlicedBuild(buildRows(this.catalog, instances));
    if (instances.length < SLICED_BUILD_MIN) steps.finish();
    this.build = { steps, version };
  }

  private install(build: { steps: SlicedBuild<Built>; version: number }): void {
    const built = resultOf(build.steps, () => (this.build = undefined));
    this.rows = built.rows;
    this.outs = built.outs;
    this.version = build.version;
    this.build = undefined;
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
