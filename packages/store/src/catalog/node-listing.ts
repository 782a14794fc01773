// GET /v1/catalog/nodes in name order, kept up to date instead of rebuilt (issue #16). At 100,000
// nodes, sorting every node and copying each into its output shape took ~150 ms of event loop per
// read, after every write. Rows are never changed in place (a write stores a new record object), so
// the listing keeps the sorted rows of its last answer and follows the table's journal of changed
// nodes (CatalogTable.nodeChangesSince): each changed node's row is replaced, inserted or removed
// where a binary search puts it. Comparing every record with the last answer and merging the ones
// not seen (a new 100,000-row array) is left for when the journal cannot tell (first read, a
// restored table, thousands of changes). Output objects are made once per record and shared by
// every answer that holds the record: callers must not change them (they are frozen, so a change
// would throw), and the HTTP layer keeps the encoded bytes of runs of them (http/sliced-json.ts).
// That comparison and merge — the first build, ~0.2 s at 100,000 nodes, is one with no rows yet —
// runs in steps a reader that can wait does not hold the event loop for (listing-steps.ts); it
// works from the records and the journal position taken when it started, and the writes made
// meanwhile are followed afterwards like any others.
import { nodeOut } from './views';
import { FollowedListing, lowerBound } from './followed-listing';
import { ROWS_PER_YIELD, sortInSteps, type BuildSteps, type ListingBuilds } from './listing-steps';
import { fold } from './keys';
import type { NodeOut } from './outputs';
import type { NodeRecord } from './records';
import type { CatalogTable } from './catalog-table';
import { ListingKey } from '../kept-listings';

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

interface Built {
  rows: Row[];
  outs: NodeOut[];
  members: Set<NodeRecord>;
}

/** Yields every `per` calls. */
function every(per: number): () => boolean {
  let n = 0;
  return () => ++n % per === 0;
}

/**
 * The rows of `all` (every record of the table) in name order, made from `old` (the rows of a
 * previous answer, whose records are `members`) in steps: rows of records not seen are made and
 * sorted, then merged with the old rows still live. Nothing of `old` is changed.
 */
function* mergeSteps(old: readonly Row[], members: ReadonlySet<NodeRecord>, all: readonly NodeRecord[]): BuildSteps<Built> {
  const pause = every(ROWS_PER_YIELD);
  const live = new Set<NodeRecord>();
  const made: Row[] = [];
  for (const r of all) {
    live.add(r);
    if (!members.has(r)) made.push(rowOf(r));
    if (pause()) yield;
  }
  const fresh = yield* sortInSteps(made, compareRows);
  const replaced = new Set<string>();
  for (const r of fresh) {
    replaced.add(r.key);
    if (pause()) yield;
  }
  // One merge of the old rows still live (minus those a fresh record replaces) with the fresh ones.
  const rows: Row[] = [];
  let i = 0;
  let j = 0;
  while (i < old.length || j < fresh.length) {
    const a = old[i];
    if (a !== undefined && (replaced.has(a.key) || !live.has(a.record))) {
      i++;
    } else if (a !== undefined && (j >= fresh.length || compareRows(a, fresh[j]) <= 0)) {
      rows.push(a);
      i++;
    } else {
      rows.push(fresh[j++]);
    }
    if (pause()) yield;
  }
  const outs: NodeOut[] = new Array<NodeOut>(rows.length);
  for (let k = 0; k < rows.length; k++) {
    outs[k] = rows[k].out;
    if (pause()) yield;
  }
  return { rows, outs, members: live };
}

class NodeListing extends FollowedListing<Built, NodeOut> {
  /** In name order. */
  private rows: Row[] = [];
  /** rows[i].out at i: what a read hands out. */
  private outs: NodeOut[] = [];
  private members = new Set<NodeRecord>();

  constructor(catalog: CatalogTable, builds: ListingBuilds) {
    // The journal also names nodes whose services or checks changed: follow() finds their rows unchanged.
    super(catalog, MAX_SPLICES, builds);
  }

  /** A comparison and merge of every record with the rows kept. */
  protected buildSteps(): { steps: BuildSteps<Built>; inputs: number } {
    const all = this.catalog.allNodes();
    return { steps: mergeSteps(this.rows, this.members, all), inputs: all.length };
  }

  protected adopt(built: Built): void {
    this.rows = built.rows;
    this.outs = built.outs;
    this.members = built.members;
  }

  protected answer(): readonly NodeOut[] {
    return this.outs;
  }

  get records(): readonly Row[] {
    return this.rows;
  }

  /** Brings the row of the node filed under `key` in line with the table. */
  protected follow(key: string): void {
    const record = this.catalog.node(key);
    // Binary search on the key alone: keys are unique among rows.
    const lo = lowerBound(this.rows, key);
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
}

/** The listing kept on the table (CatalogTable.listings): a restored store starts a new one. */
const NODE_LISTING = new ListingKey<NodeListing>('catalog nodes');

/** The table's nodes in name order, each as its (shared, frozen) output object, filtered by `keep`. */
export function listNodes(catalog: CatalogTable, builds: ListingBuilds, keep?: (r: NodeRecord) => boolean): NodeOut[] {
  const listing = catalog.listings.of(NODE_LISTING, () => new NodeListing(catalog, builds));
  const outs = listing.update();
  if (!keep) return outs.slice();
  const out: NodeOut[] = [];
  for (const row of listing.records) if (keep(row.record)) out.push(row.out);
  return out;
}
