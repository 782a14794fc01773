// Large filtered reads kept between reads and first built in steps (issue #16): health/service and
// catalog/service with tag or node-meta filters, catalog/service itself, and health/state. Each
// selected, sorted and shaped every row in one go: ~0.2–2 s of event loop (loaded box) per read of
// 100,000 instances or checks, after any write.
//
// All of them answer rows ordered by node first, and a node's rows depend on that node alone (its
// record, services and checks) and on the query. So a listing per query (health-listing.ts uses one too)
// keeps its rows in (node, …) order and follows the catalog's journal of changed nodes
// (CatalogTable.nodeChangesSince): a changed node's rows are found by binary search and replaced by
// what the node shows now. The full build — first read, a restored table, more changes than are
// worth following — runs in steps (listing-steps.ts) a reader that can wait does not hold the event
// loop for; writes made meanwhile are followed afterwards through the journal, like any others, so
// the answer is exactly the one-go answer for the state it is read in.
import type { CatalogTable } from './catalog-table';
import { ListingKey } from '../kept-listings';
import { FollowedListing, lowerBound } from './followed-listing';
import { ROWS_PER_YIELD, SLICED_BUILD_MIN, sortInSteps, type BuildSteps, type ListingBuilds } from './listing-steps';

export interface Row<T> {
  /** fold(node name) \0 the rest of the order within the node: unique, compared as a string. */
  key: string;
  out: T;
}

/** What a listing shows: its candidates when built, and a node's rows when that node changed. */
export interface RowSource<I, T> {
  /** Every candidate item (instances, checks), any order; taken once per full build. */
  items(): readonly I[];
  /** The item's row, or undefined when the query leaves it out (or its node is gone). */
  row(item: I): Row<T> | undefined;
  /** The rows node `nodeKey` shows now, any order. */
  rowsOfNode(nodeKey: string): Row<T>[];
}

/** More changed nodes than this since the last read: one full build instead. */
const MAX_FOLLOWED = 512;

/** Rows made per yield: shaping a row costs ~2–20 µs. */
const ITEMS_PER_YIELD = 32;

function byKey<T>(a: Row<T>, b: Row<T>): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

interface Built<T> {
  rows: Row<T>[];
  outs: T[];
}

function* buildRows<I, T>(items: readonly I[], source: RowSource<I, T>): BuildSteps<Built<T>> {
  const made: Row<T>[] = [];
  for (let i = 0; i < items.length; i++) {
    const r = source.row(items[i]);
    if (r !== undefined) made.push(r);
    if (i % ITEMS_PER_YIELD === ITEMS_PER_YIELD - 1) yield;
  }
  const rows = yield* sortInSteps(made, byKey);
  const outs = new Array<T>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    outs[i] = rows[i].out;
    if (i % (ROWS_PER_YIELD * 8) === ROWS_PER_YIELD * 8 - 1) yield;
  }
  return { rows, outs };
}

/** One query's rows, kept in order and following the catalog's journal (health-listing.ts keeps its own set of them). */
export class NodeRows<I, T> extends FollowedListing<Built<T>, T> {
  private rows: Row<T>[] = [];
  private outs: T[] = [];

  constructor(
    catalog: CatalogTable,
    private readonly source: RowSource<I, T>,
    builds: ListingBuilds,
  ) {
    super(catalog, MAX_FOLLOWED, builds);
  }

  protected buildSteps(): { steps: BuildSteps<Built<T>>; inputs: number } {
    const items = this.source.items();
    return { steps: buildRows(items, this.source), inputs: items.length };
  }

  protected adopt(built: Built<T>): void {
    this.rows = built.rows;
    this.outs = built.outs;
  }

  protected answer(): readonly T[] {
    return this.outs;
  }

  /** Replaces the rows of node `nodeKey` by the ones it shows now. */
  protected follow(nodeKey: string): void {
    const from = lowerBound(this.rows, `${nodeKey}\u0000`);
    const to = lowerBound(this.rows, `${nodeKey}\u0001`);
    const fresh = this.catalog.node(nodeKey) ? this.source.rowsOfNode(nodeKey).sort(byKey) : [];
    if (to === from && fresh.length === 0) return;
    this.rows.splice(from, to - from, ...fresh);
    this.outs.splice(from, to - from, ...fresh.map((r) => r.out));
  }

  /** Rows held (what keeping this listing costs). */
  get size(): number {
    return this.rows.length;
  }
}

/**
 * Listings kept per table: one per distinct query, the least recently read dropped past this many,
 * or past this many rows in all (a row costs ~100 bytes beside its output, which is shared).
 */
const KEPT_PER_TABLE = 32;
const KEPT_ROWS_PER_TABLE = 1_000_000;

/** One listing per query, kept on the table (CatalogTable.listings), the least recently read first. */
const QUERY_LISTINGS = new ListingKey<Map<string, NodeRows<unknown, unknown>>>('catalog queries');

/**
 * The answer of query `id` (a string naming the kind of read and every parameter) from its kept
 * listing, made from `source` when there is none. A copy the caller may keep.
 */
export function keptRows<I, T>(catalog: CatalogTable, builds: ListingBuilds, id: string, source: () => RowSource<I, T>): T[] {
  const byId = catalog.listings.of(QUERY_LISTINGS, () => new Map());
  let listing = byId.get(id) as NodeRows<I, T> | undefined;
  if (listing) byId.delete(id);
  else listing = new NodeRows(catalog, source(), builds);
  // Most recently read last: the first entries are the ones to drop.
  byId.set(id, listing as NodeRows<unknown, unknown>);
  const answer = listing.update().slice();
  let rows = 0;
  for (const l of byId.values()) rows += l.size;
  while (byId.size > 1 && (byId.size > KEPT_PER_TABLE || rows > KEPT_ROWS_PER_TABLE)) {
    const [oldest, dropped] = byId.entries().next().value as [string, NodeRows<unknown, unknown>];
    rows -= dropped.size;
    byId.delete(oldest);
  }
  return answer;
}

/** Whether query `id` already has a kept listing (then it is cheaper to follow than to read anew). */
export function hasKeptRows(catalog: CatalogTable, id: string): boolean {
  return catalog.listings.of(QUERY_LISTINGS, () => new Map()).has(id);
}

/** Reads of fewer candidates than this are made anew each time (cheap), not kept. */
export const KEPT_ROWS_MIN = SLICED_BUILD_MIN;
