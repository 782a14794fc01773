// A service's instances in (node, service ID) order, kept between reads rather than sorted on each
// (issue #16). Sorting 100,000 instances of one service — a folded, joined key made per instance,
// then the sort — took a few hundred ms of event loop per health or catalog read of that service.
// Instances are never changed in place (a write stores a new record), so the order remembers the
// records of its last answer; next time it looks for records it has not seen, sorts only those and
// merges them in (one linear pass), dropping records that left. What callers get is the records:
// they filter (tags, node meta) and shape them as before.
// Reads of 1,000 instances or more no longer come here: they answer from kept listings built in
// steps (kept-reads.ts, node-rows.ts); this serves the small ones.
import { fold } from './keys';
import type { ServiceRecord } from './records';
import type { CatalogTable } from './catalog-table';
import { ListingKey } from '../kept-listings';

interface Row {
  /** fold(node name) \0 fold(service ID): unique among a service's instances. */
  key: string;
  record: ServiceRecord;
}

function rowOf(record: ServiceRecord): Row {
  return { key: `${record.nodeKey}\u0000${fold(record.ID)}`, record };
}

class InstanceOrder {
  private rows: Row[] = [];
  private records: ServiceRecord[] = [];
  private members = new Set<ServiceRecord>();

  /** `all` (the instances as the table holds them, any order) in (node, service ID) order. */
  update(all: readonly ServiceRecord[]): readonly ServiceRecord[] {
    const fresh: Row[] = [];
    for (const r of all) if (!this.members.has(r)) fresh.push(rowOf(r));
    if (fresh.length === 0 && all.length === this.members.size) return this.records;
    fresh.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const replaced = new Set(fresh.map((r) => r.key));
    const live = new Set(all);
    const rows: Row[] = [];
    let i = 0;
    let j = 0;
    while (i < this.rows.length || j < fresh.length) {
      const a = this.rows[i];
      if (a !== undefined && (replaced.has(a.key) || !live.has(a.record))) {
        i++;
        continue;
      }
      if (a !== undefined && (j >= fresh.length || a.key <= fresh[j].key)) {
        rows.push(a);
        i++;
      } else {
        rows.push(fresh[j++]);
      }
    }
    this.rows = rows;
    this.members = live;
    this.records = rows.map((r) => r.record);
    return this.records;
  }
}

/** Kept on the table (CatalogTable.listings), per service name and kind of lookup. */
const INSTANCE_ORDERS = new ListingKey<Map<string, InstanceOrder>>('instance orders');

/** The instances named `name` (or its Connect-capable ones) in (node, service ID) order. Do not modify. */
export function sortedInstances(catalog: CatalogTable, name: string, connect: boolean): readonly ServiceRecord[] {
  const byName = catalog.listings.of(INSTANCE_ORDERS, () => new Map());
  const all = connect ? catalog.connectInstances(name) : catalog.instancesNamed(name);
  const id = `${connect ? 'c' : 's'}:${fold(name)}`;
  let order = byName.get(id);
  if (all.length === 0) {
    // Services come and go: an order is forgotten with its last instance.
    byName.delete(id);
    return [];
  }
  if (!order) byName.set(id, (order = new InstanceOrder()));
  return order.update(all);
}
