// GET /v1/catalog/nodes in name order, kept up to date instead of rebuilt (issue #16). At 100,000
// nodes, sorting every node and copying each into its output shape took ~150 ms of event loop per
// read, after every write. Rows are never changed in place (a write stores a new record object), so
// the listing keeps the sorted rows of its last answer and follows the table's journal of changed
// nodes (CatalogTable.nodeChangesSince): each changed node's row is replaced, inserted or removed
// where a binary search puts it. Comparing every record with the last answer (~13 ms at 100,000
// nodes) and merging (a new 100,000-row array) is left for when the journal cannot tell (first
// read, a restored table, thousands of changes). Output objects are made once per record and shared
// by every answer that holds the record: callers must not change them (they are frozen, so a change
// would throw), and the HTTP layer keeps the encoded bytes of runs of them (http/sliced-json.ts).
import { nodeOut } from './views';
import { fold } from './keys';
import type { NodeOut } from './outputs';
import type { NodeRecord } from './records';
import type { CatalogTable } from '../tables/catalog';

interface Row {
  record: NodeRecord;
  /** fold(record.Node), computed once per record; unique in a listing (the table's key). */
  key: string;
  out: NodeOut;
}

/** More changes than this since the last read: one full comparison and merge is cheaper than splices. */
const MAX_SPLICES = 256;

function compareRows(a: Row, b: Row): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  const x = a.record.Node;
  const y = b.record.Node;
  return x === y ? 0 : x < y ? -1 : 1;
}

function rowOf(record: NodeRecord): Row {
  return { record, key: fold(record.Node), out: Object.freeze(nodeOut(record)) as NodeOut };
}

class NodeListing {
  /** In name order. */
  private rows: Row[] = [];
  /** rows[i].out at i: what a read hands out. */
  private outs: NodeOut[] = [];
  private members = new Set<NodeRecord>();
  /** The table's node version the rows reflect; -1 before the first read. */
  private version = -1;

  constructor(private readonly catalog: CatalogTable) {}

  /** Every node of the table in name order, as output objects. Do not modify. */
  update(): readonly NodeOut[] {
    const changes = this.catalog.nodeChangesSince(this.version);
    if (changes.keys !== null && changes.keys.length === 0 && this.version >= 0) return this.outs;
    // The journal also names nodes whose services or checks changed: follow() finds their rows unchanged.
    const changed = changes.keys === null || this.version < 0 ? null : new Set(changes.keys);
    if (changed !== null && changed.size <= MAX_SPLICES) {
      for (const key of changed) this.follow(key);
    } else {
      this.merge(this.catalog.allNodes());
    }
    this.version = changes.version;
    return this.outs;
  }

  get records(): readonly Row[] {
    return this.rows;
  }

  /** Brings the row of the node filed under `key` in line with the table. */
  private follow(key: string): void {
    const record = this.catalog.node(key);
    // Binary search on the key alone: keys are unique among rows.
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.rows[mid].key < key) lo = mid + 1;
      else hi = mid;
    }
    const at = this.rows[lo]?.key === key ? this.rows[lo] : undefined;
    if (at !== undefined && at.record === record) return;
    if (at !== undefined) this.members.delete(at.record);
    if (record === undefined) {
      // Created and removed again between two reads: it never had a row (rows[lo] is another node's).
      if (at === undefined) return;
      this.rows.splice(lo, 1);
      this.outs.splice(lo, 1);
      return;
    }
    const row = rowOf(record);
    this.members.add(record);
    if (at !== undefined) {
      this.rows[lo] = row;
      this.outs[lo] = row.out;
    } else {
      this.rows.splice(lo, 0, row);
      this.outs.splice(lo, 0, row.out);
    }
  }

  /** Compares every record with the rows: sorts the ones not seen and merges them in. */
  private merge(all: NodeRecord[]): void {
    const fresh: Row[] = [];
    for (const r of all) if (!this.members.has(r)) fresh.push(rowOf(r));
    if (fresh.length === 0 && all.length === this.members.size) return;
    fresh.sort(compareRows);
    const replaced = new Set(fresh.map((r) => r.key));
    const members = this.members;
    for (const r of fresh) members.add(r.record);
    // One merge of the old rows (minus those a fresh record replaces) with the fresh ones.
    const old = this.rows;
    const rows: Row[] = [];
    let i = 0;
    let j = 0;
    while (i < old.length || j < fresh.length) {
      const a = old[i];
      if (a !== undefined && replaced.has(a.key)) {
        members.delete(a.record);
        i++;
        continue;
      }
      if (a !== undefined && (j >= fresh.length || compareRows(a, fresh[j]) <= 0)) {
        rows.push(a);
        i++;
      } else {
        rows.push(fresh[j++]);
      }
    }
    if (members.size !== all.length || rows.length !== all.length) {
      // Nodes left the table: keep only the live records.
      const live = new Set(all);
      this.members = live;
      this.rows = rows.filter((r) => live.has(r.record));
    } else {
      this.rows = rows;
    }
    this.outs = this.rows.map((r) => r.out);
  }
}

/** One listing per table: a restored store has new tables and so starts a new listing. */
const listings = new WeakMap<CatalogTable, NodeListing>();

/** The table's nodes in name order, each as its (shared, frozen) output object, filtered by `keep`. */
export function listNodes(catalog: CatalogTable, keep?: (r: NodeRecord) => boolean): NodeOut[] {
  let listing = listings.get(catalog);
  if (!listing) listings.set(catalog, (listing = new NodeListing(catalog)));
  const outs = listing.update();
  if (!keep) return outs.slice();
  const out: NodeOut[] = [];
  for (const row of listing.records) if (keep(row.record)) out.push(row.out);
  return out;
}
