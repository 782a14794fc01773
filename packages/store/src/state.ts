// All tables of the state machine, and the rules that span tables (what goes when a node goes).
// A new table is a new file under tables/ plus a field, a dump entry and a cascade here.
import { catalogFallbackKey, fold } from './catalog/keys';
import { CatalogTable, type CatalogTableDump } from './tables/catalog';
import { CoordinateTable, type CoordinateTableDump } from './tables/coordinates';
import type { Txn } from './txn';
import { AclTable, type AclTableDump } from './acl/acl-table';
import { IntentionTable, type IntentionTableDump } from './intentions/intention-table';
import { CaTable, type CaTableDump } from './ca/ca-table';

export interface StateDump {
  catalog: CatalogTableDump;
  coordinates: CoordinateTableDump;
  acl?: AclTableDump;
  intentions?: IntentionTableDump;
  ca?: CaTableDump;
}

export class State {
  constructor(
    readonly datacenter: string,
    readonly catalog: CatalogTable = new CatalogTable(),
    readonly coordinates: CoordinateTable = new CoordinateTable(),
  ) {}

  acl = new AclTable();

  intentions = new IntentionTable();
  ca = new CaTable();

  /** Remove a node and everything that hangs off it in every table. */
  deleteNode(nodeName: string, txn: Txn): void {
    if (!this.catalog.node(nodeName)) return;
    this.coordinates.delete(fold(nodeName), txn);
    this.catalog.deleteNode(nodeName, txn);
  }

  /**
   * Whether a bumped watch key should keep its own index entry: table keys always do, per-entity keys
   * only while their entity exists (see IndexTable).
   */
  keepsIndexEntry(key: string): boolean {
    return this.catalog.isLiveKey(key) ?? true;
  }

  fallbackKey(key: string): string | undefined {
    return catalogFallbackKey(key);
  }

  dump(): StateDump {
    return { catalog: this.catalog.dump(), coordinates: this.coordinates.dump(), acl: this.acl.dump(), intentions: this.intentions.dump(), ca: this.ca.dump() };
  }

  static load(datacenter: string, dump: StateDump): State {
    const state = new State(datacenter, CatalogTable.load(dump.catalog), CoordinateTable.load(dump.coordinates));
    state.intentions = IntentionTable.load(dump.intentions);
    state.ca = CaTable.load(dump.ca);
    state.acl = AclTable.load(dump.acl);
    return state;
  }

  invariants(): string[] {
    const problems = this.catalog.invariants();
    problems.push(...this.acl.invariants());
    for (const k of this.coordinates.nodeKeys()) {
      if (!this.catalog.node(k)) problems.push(`coordinate for missing node ${k}`);
    }
    return problems;
  }
}
