// What the catalog's reads keep beside the table between reads (issue #16): sorted listings that
// follow the table's journal of changed nodes instead of being rebuilt after each write. The table
// owns one (CatalogTable.listings), so a restored store, which has new tables, starts afresh, and a
// reader sees where a kept listing lives. The modules named below make and read the entries.
import type { CheckServiceNodeOut } from './outputs';
import type { InstanceOrder } from './instance-order';
import type { NodeListing } from './node-listing';
import type { NodeRows } from './node-rows';
import type { ServiceRecord } from './records';

export class CatalogListings {
  /** GET /v1/catalog/nodes in name order (node-listing.ts); made at its first read. */
  nodes: NodeListing | undefined;
  /** Unfiltered health/service per kind of lookup and folded service name (health-listing.ts). */
  readonly health = new Map<string, NodeRows<ServiceRecord, CheckServiceNodeOut>>();
  /** Large filtered reads, one per query, least recently read first (node-rows.ts keptRows). */
  readonly byQuery = new Map<string, NodeRows<unknown, unknown>>();
  /** Small services' instances in (node, service ID) order (instance-order.ts). */
  readonly instanceOrders = new Map<string, InstanceOrder>();
}
