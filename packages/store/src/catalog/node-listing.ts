// GET /v1/catalog/nodes in name order, kept up to date instead of rebuilt (issue #16). At 100,000
// nodes, sorting every node and copying each into its output shape took ~150 ms of event loop per
// read, after every write. Rows are never changed in place (a write stores a new record object), so
// the listing remembers the sorted records of its last answer and, next time, finds the records it
// has not seen, sorts only those and merges them in (one linear pass): a changed node's new record
// takes its predecessor's place, a deleted node is dropped. Output objects are made once per record
// and shared by every answer that holds the record: callers must not change them (they are frozen,
// so a change would throw).
import { nodeOut } from './views';
import { fold } from './keys';
import type { NodeOut } from './outputs';
import type { NodeRecord } from './records';
import type { CatalogTable } from '../tables/catalog';

interface Row {
  record: NodeRecord;
  /** fold(record.Node), computed once per record. */
  key: string;
  out: NodeOut;
}

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
  private outs: NodeOut[] = [];
  private members = new Set<NodeRecord>();

  /** Every node of `all` (the table's records, any order), in name order, as output objects. Do not modify. */
  update(all: NodeRecord[]): readonly NodeOut[] {
    const fresh: Row[] = [];
    for (const r of all) if (!this.members.has(r)) fresh.push(rowOf(r));
    if (fresh.length === 0 && all.length === this.members.size) return this.outs;
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
    return this.outs;
  }

  get records(): readonly Row[] {
    return this.rows;
  }
}

/** One listing per table: a restored store has new tables and so starts a new listing. */
const listings = new WeakMap<CatalogTable, NodeListing>();

/** The table's nodes in name order, each as its (shared, frozen) output object, filtered by `keep`. */
export function listNodes(catalog: CatalogTable, keep?: (r: NodeRecord) => boolean): NodeOut[] {
  let listing = listings.get(catalog);
  if (!listing) listings.set(catalog, (listing = new NodeListing()));
  const outs = listing.update(catalog.allNodes());
  if (!keep) return outs.slice();
  const out: NodeOut[] = [];
  for (const row of listing.records) if (keep(row.record)) out.push(row.out);
  return out;
}
