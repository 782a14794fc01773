// All tables of the state machine, and the rules that span tables (what goes when a node goes).
// A new table is `<area>/<area>-table.ts` (as catalog/catalog-table.ts, kv/kv-table.ts) plus a field, a dump and a capture entry and a cascade here.
import { catalogFallbackKey, fold } from './catalog/keys';
import { CatalogTable, type CatalogTableDump } from './catalog/catalog-table';
import { CoordinateTable, type CoordinateTableDump } from './coordinates/coordinate-table';
import type { Txn } from './txn';
import { SessionTable, type SessionTableDump } from './sessions/session-table';
import { KvTable, type KvTableDump } from './kv/kv-table';
import type { ValueArenas } from './kv/value-arenas';
import { KV_PREFIX } from './kv/kv-keys';
import { QueryTable, type QueryTableDump } from './queries/query-table';
import { AclTable, type AclTableDump } from './acl/acl-table';
import { IntentionTable, type IntentionTableDump } from './intentions/intention-table';
import { CaTable, type CaTableDump } from './ca/ca-table';
import { AreaTable, type AreaTableDump } from './areas/area-table';
import { RequestTable, type RequestTableDump } from './requests/request-table';
import { Fields, runSync } from './snapshot-stream';
import { EventTable, type EventTableDump } from './events/event-table';
import { AutopilotTable, type AutopilotTableDump } from './autopilot/autopilot-table';

export interface StateDump {
  sessions?: SessionTableDump;
  kv?: KvTableDump;
  queries?: QueryTableDump;
  catalog: CatalogTableDump;
  coordinates: CoordinateTableDump;
  acl?: AclTableDump;
  intentions?: IntentionTableDump;
  ca?: CaTableDump;
  areas?: AreaTableDump;
  /** Absent in snapshots written before the dedup window existed. */
  requests?: RequestTableDump;
  /** User events (absent in older snapshots). */
  events?: EventTableDump;
  /** Autopilot configuration (absent in older snapshots). */
  autopilot?: AutopilotTableDump;
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

  sessions = new SessionTable();
  kv = new KvTable();
  queries = new QueryTable();
  areas = new AreaTable();
  /** Applied request ids and their results (the dedup window; requests/request-table.ts). */
  requests = new RequestTable();
  /** The ring of user events (events/). */
  events = new EventTable();
  autopilot = new AutopilotTable();


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
    if (key.startsWith(KV_PREFIX)) return false;
    return this.catalog.isLiveKey(key) ?? true;
  }

  fallbackKey(key: string): string | undefined {
    return catalogFallbackKey(key);
  }

  dump(): StateDump {
    return { catalog: this.catalog.dump(), coordinates: this.coordinates.dump(), acl: this.acl.dump(), intentions: this.intentions.dump(), ca: this.ca.dump(), sessions: this.sessions.dump(), kv: this.kv.dump(), queries: this.queries.dump(), areas: this.areas.dump(), requests: this.requests.dump(), events: this.events.dump(), autopilot: this.autopilot.dump() };
  }

  /**
   * dump() as of now, for a snapshot serialised later while writes go on (snapshot-handle.ts): the
   * same fields in the same order; `release` ends what the capture keeps up in the live tables.
   */
  capture(): { value: Fields; release: () => void } {
    const kv = this.kv.capture();
    const value = new Fields([
      ['catalog', this.catalog.capture()],
      ['coordinates', this.coordinates.capture()],
      ['acl', this.acl.capture()],
      ['intentions', this.intentions.capture()],
      // Small tables (one CA, a few peer datacenters): copied now.
      ['ca', this.ca.dump()],
      ['sessions', this.sessions.capture()],
      ['kv', kv.value],
      ['queries', this.queries.capture()],
      ['areas', this.areas.dump()],
      ['requests', this.requests.capture()],
      // Small: at most EVENT_RING_SIZE events and one row, copied now.
      ['events', this.events.dump()],
      ['autopilot', this.autopilot.dump()],
    ]);
    return { value, release: kv.release };
  }

  static load(datacenter: string, dump: StateDump): State {
    return runSync(State.loadSteps(datacenter, dump));
  }

  /**
   * load() in steps (a restore prepares the state between other work): the catalog, KV and the
   * request window a few thousand rows per step, each other (small) table in one step of its own.
   */
  static *loadSteps(datacenter: string, dump: StateDump, arenas?: ValueArenas): Generator<void, State, void> {
    const catalog = yield* CatalogTable.loadSteps(dump.catalog);
    yield;
    const state = new State(datacenter, catalog, CoordinateTable.load(dump.coordinates));
    yield;
    state.intentions = IntentionTable.load(dump.intentions);
    state.ca = CaTable.load(dump.ca);
    state.acl = AclTable.load(dump.acl);
    yield;
    state.sessions = SessionTable.load(dump.sessions);
    yield;
    state.kv = yield* KvTable.loadSteps(dump.kv, undefined, arenas);
    yield;
    state.queries = QueryTable.load(dump.queries);
    state.areas = AreaTable.load(dump.areas);
    yield;
    state.requests = yield* RequestTable.loadSteps(dump.requests);
    yield;
    state.events = EventTable.load(dump.events);
    state.autopilot = AutopilotTable.load(dump.autopilot);
    return state;
  }

  invariants(): string[] {
    const problems = this.catalog.invariants();
    problems.push(...this.acl.invariants());
    problems.push(...this.sessions.invariants(), ...this.kv.invariants(), ...this.queries.invariants());
    problems.push(...this.areas.invariants());
    problems.push(...this.events.invariants());
    for (const k of this.coordinates.nodeKeys()) {
      if (!this.catalog.node(k)) problems.push(`coordinate for missing node ${k}`);
    }
    return problems;
  }
}
