// What reads keep beside a table between reads (issue #16): sorted listings that follow the table's
// journal of changes instead of being rebuilt after each write. A table owns one KeptListings
// (CatalogTable.listings, KvTable.listings), so a reader sees where a kept listing lives and a
// restored store, which has new tables, starts afresh. Each listing module files its own under a
// key it declares (the table cannot name their types: they import the table):
//   catalog/node-listing.ts    NODE_LISTING      GET /v1/catalog/nodes in name order
//   catalog/health-listing.ts  HEALTH_LISTINGS   unfiltered health/service, per service and lookup
//   catalog/node-rows.ts       QUERY_LISTINGS    large filtered reads, one per query, LRU
//   catalog/instance-order.ts  INSTANCE_ORDERS   small services' instances in (node, ID) order
//   kv/kv-listing.ts           PREFIX_LISTINGS   large ?recurse prefixes, LRU

/** The name a listing module files what it keeps under, typed by what that is. */
export class ListingKey<T> {
  declare private readonly kept: T;
  constructor(readonly name: string) {}
}

export class KeptListings {
  private readonly kept = new Map<ListingKey<unknown>, unknown>();

  /** What is kept under `key` on this table, made by `make` at first use. */
  of<T>(key: ListingKey<T>, make: () => T): T {
    let value = this.kept.get(key) as T | undefined;
    if (value === undefined) this.kept.set(key, (value = make()));
    return value;
  }
}
