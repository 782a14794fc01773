// The catalog tables (Consul's state/catalog.go): nodes, services and checks, with the secondary
// indexes reads need (node ID, service name, connect target). The mutators keep the indexes in step
// and report to the Txn every watch key whose readers would now see something different.
// They assume the caller validated the command: they never refuse.
import {
  CHECKS,
  connectTargets,
  fold,
  instanceKeys,
  NODES,
  NODE_PREFIX,
  nodeWatchKey,
  SERVICES,
  SERVICE_PREFIX,
  CONNECT_PREFIX,
} from './keys';
import type { CheckData, CheckRecord, NodeData, NodeRecord, RaftIndexes, ServiceData, ServiceRecord } from './records';
import { plainEqual, sameRecordData } from '../plain-data';
import { Fields, flatStream, listStream, runSync } from '../snapshot-stream';
import type { Txn } from '../txn';
import { KeptListings } from '../kept-listings';
import { withIndexes } from '../indexed-record';
import { ShardedMap } from '../sharded-map';

export interface CatalogTableDump {
  nodes: NodeRecord[];
  services: ServiceRecord[];
  checks: CheckRecord[];
}

/** Identity of a service instance: its node and its service ID, both folded. */
function instanceId(nodeKey: string, serviceKey: string): string {
  return `${nodeKey}\u0000${serviceKey}`;
}

function stamp<T extends object>(data: T, existing: RaftIndexes | undefined, index: number): T & RaftIndexes {
  return withIndexes(data, existing?.CreateIndex ?? index, index);
}

function addTo<V>(outer: Map<string, ShardedMap<string, V>>, key: string, inner: string, value: V): void {
  let m = outer.get(key);
  if (!m) outer.set(key, (m = new ShardedMap()));
  m.set(inner, value);
}

function removeFrom<V>(outer: Map<string, ShardedMap<string, V>>, key: string, inner: string): void {
  const m = outer.get(key);
  if (!m) return;
  m.delete(inner);
  if (m.size === 0) outer.delete(key);
}

/**
 * A per-node map of `services` or `checks`, stamped with the epoch it was made in. capture() starts a
 * new epoch and hands the snapshot the maps as they are; a write to a map of an older epoch replaces
 * it by a copy first (putIn/removeIn), so what a snapshot holds never changes. They hold a node's few
 * services or checks, so a copy is cheap.
 */
class Bucket<V> extends Map<string, V> {
  constructor(
    readonly epoch: number,
    entries?: Iterable<readonly [string, V]>,
  ) {
    super(entries);
  }
}

/** Node changes remembered for nodeChangesSince; a view further behind looks at every node. */
const NODE_JOURNAL_MAX = 4096;

export class CatalogTable {
  /** What reads keep beside this table between reads (kept-listings.ts). */
  readonly listings = new KeptListings();
  /** folded node name → node */
  // The maps that grow with the node count are sharded once large (sharded-map.ts): in single Maps,
  // the registration of the 131,073rd node grew six of them at once, 131–172 ms of one write.
  private readonly nodes = new ShardedMap<string, NodeRecord>();
  /** folded node ID → folded node name */
  private readonly nodeIds = new ShardedMap<string, string>();
  /** folded node name → folded service ID → instance */
  private readonly services = new ShardedMap<string, Bucket<ServiceRecord>>();
  /** folded service name → instance id → instance */
  private readonly byName = new Map<string, ShardedMap<string, ServiceRecord>>();
  /** folded service name → instance id → its proxies and its Connect-native instances */
  private readonly byConnect = new Map<string, ShardedMap<string, ServiceRecord>>();
  /** folded node name → folded check ID → check */
  private readonly checks = new ShardedMap<string, Bucket<CheckRecord>>();
  /**
   * folded check ID → folded node name → check: finds the nodes carrying a given check (the leader's
   * client agents are the nodes with a serfHealth check) without walking every node (issue #16).
   */
  private readonly byCheckId = new Map<string, ShardedMap<string, CheckRecord>>();
  /** Buckets of an epoch before this one may be held by a snapshot (see Bucket). */
  private epoch = 0;
  /**
   * Rows in `services` and `checks`, kept as they change: metrics read them on every scrape, and
   * counting the per-node buckets was O(nodes) — ~30 ms of the event loop per scrape at 100,000.
   */
  private serviceRows = 0;
  private checkRows = 0;
  /**
   * Which nodes were changed lately — the node itself, or one of its services or checks — so that a
   * view kept beside the table (the sorted node listing, catalog/node-listing.ts; a service's health
   * entries, catalog/health-listing.ts) can follow the few changes since it last looked instead of
   * looking at every row (issue #16). Entry i is the folded node name changed at version
   * journalBase+i+1.
   */
  private nodeVersion = 0;
  private journalBase = 0;
  private nodeJournal: string[] = [];

  // ---- reads ----

  node(name: string): NodeRecord | undefined {
    return this.nodes.get(fold(name));
  }

  nodeById(id: string): NodeRecord | undefined {
    const key = this.nodeIds.get(fold(id));
    return key === undefined ? undefined : this.nodes.get(key);
  }

  allNodes(): NodeRecord[] {
    return [...this.nodes.values()];
  }

  /**
   * The folded names of the nodes whose node, services or checks changed since `version` (a value
   * this method returned before), or null when that is too long ago to tell — then every row must
   * be looked at.
   */
  nodeChangesSince(version: number): { version: number; keys: readonly string[] | null } {
    if (version === this.nodeVersion) return { version, keys: [] };
    if (version < this.journalBase || version > this.nodeVersion) return { version: this.nodeVersion, keys: null };
    return { version: this.nodeVersion, keys: this.nodeJournal.slice(version - this.journalBase) };
  }

  private nodeChanged(key: string): void {
    this.nodeVersion++;
    if (this.nodeJournal.length < NODE_JOURNAL_MAX) {
      this.nodeJournal.push(key);
    } else {
      // Nobody read it for a long while: start afresh (a reader older than this rescans).
      this.nodeJournal = [];
      this.journalBase = this.nodeVersion;
    }
  }

  /** How many nodes, service instances and checks the table holds (metrics; O(1)). */
  counts(): { nodes: number; services: number; checks: number } {
    return { nodes: this.nodes.size, services: this.serviceRows, checks: this.checkRows };
  }

  service(nodeName: string, serviceId: string): ServiceRecord | undefined {
    return this.services.get(fold(nodeName))?.get(fold(serviceId));
  }

  servicesOf(nodeName: string): ServiceRecord[] {
    return [...(this.services.get(fold(nodeName))?.values() ?? [])];
  }

  allServices(): ServiceRecord[] {
    const out: ServiceRecord[] = [];
    for (const m of this.services.values()) out.push(...m.values());
    return out;
  }

  instancesNamed(serviceName: string): ServiceRecord[] {
    return [...(this.byName.get(fold(serviceName))?.values() ?? [])];
  }

  /** How many instances instancesNamed (or connectInstances, with `connect`) would return, without the copy. */
  instanceCount(serviceName: string, connect: boolean): number {
    return ((connect ? this.byConnect : this.byName).get(fold(serviceName))?.size ?? 0);
  }

  /** How many nodes the table holds. */
  get nodeCount(): number {
    return this.nodes.size;
  }

  /** Proxies whose destination is `serviceName`, and Connect-native instances named `serviceName`. */
  connectInstances(serviceName: string): ServiceRecord[] {
    return [...(this.byConnect.get(fold(serviceName))?.values() ?? [])];
  }

  check(nodeName: string, checkId: string): CheckRecord | undefined {
    return this.checks.get(fold(nodeName))?.get(fold(checkId));
  }

  checksOf(nodeName: string): CheckRecord[] {
    return [...(this.checks.get(fold(nodeName))?.values() ?? [])];
  }

  /** The checks whose folded ID equals fold(`checkId`), one per node at most, in no particular order. */
  checksWithId(checkId: string): CheckRecord[] {
    return [...(this.byCheckId.get(fold(checkId))?.values() ?? [])];
  }

  allChecks(): CheckRecord[] {
    const out: CheckRecord[] = [];
    for (const m of this.checks.values()) out.push(...m.values());
    return out;
  }

  /** The service a check belongs to (undefined for node-level checks). */
  serviceOfCheck(check: CheckRecord): ServiceRecord | undefined {
    return check.serviceKey === '' ? undefined : this.services.get(check.nodeKey)?.get(check.serviceKey);
  }

  /** Whether a per-entity watch key still names something; undefined for keys this table does not own. */
  isLiveKey(key: string): boolean | undefined {
    if (key.startsWith(NODE_PREFIX)) return this.nodes.has(key.slice(NODE_PREFIX.length));
    if (key.startsWith(SERVICE_PREFIX)) return this.byName.has(key.slice(SERVICE_PREFIX.length));
    if (key.startsWith(CONNECT_PREFIX)) return this.byConnect.has(key.slice(CONNECT_PREFIX.length));
    return undefined;
  }

  // ---- writes ----

  /** Insert or update a node; a no-op (no index moves) when nothing differs. */
  putNode(data: NodeData, txn: Txn): void {
    const key = fold(data.Node);
    const existing = this.nodes.get(key);
    if (existing && sameRecordData(existing, data)) return;
    if (existing?.ID && this.nodeIds.get(fold(existing.ID)) === key) this.nodeIds.delete(fold(existing.ID));
    const rec = stamp(data, existing, txn.index);
    this.nodes.set(key, rec);
    this.nodeChanged(key);
    if (rec.ID) this.nodeIds.set(fold(rec.ID), key);
    txn.bump(NODES, nodeWatchKey(key));
    // Health and catalog service results embed the node.
    for (const s of this.services.get(key)?.values() ?? []) txn.bump(...instanceKeys(s));
    // Checks show the node's name, whose case may have changed.
    if (existing && existing.Node !== rec.Node && this.checks.has(key)) txn.bump(CHECKS);
  }

  /** Delete a node with its services and checks (other tables' rows are the caller's business). */
  deleteNode(nodeName: string, txn: Txn): void {
    const key = fold(nodeName);
    const existing = this.nodes.get(key);
    if (!existing) return;
    for (const c of this.checksOf(key)) this.deleteCheck(key, c.CheckID, txn);
    for (const s of this.servicesOf(key)) this.deleteService(key, s.ID, txn);
    this.nodes.delete(key);
    this.nodeChanged(key);
    if (existing.ID && this.nodeIds.get(fold(existing.ID)) === key) this.nodeIds.delete(fold(existing.ID));
    txn.bump(NODES, nodeWatchKey(key));
  }

  /** Insert or update a service instance on an existing node; a no-op when nothing differs. */
  putService(data: ServiceData, txn: Txn): void {
    const serviceKey = fold(data.ID);
    const existing = this.services.get(data.nodeKey)?.get(serviceKey);
    if (existing && sameRecordData(existing, data)) return;
    if (existing) this.unindexService(existing);
    const rec = stamp(data, existing, txn.index);
    this.putIn(this.services, rec.nodeKey, serviceKey, rec);
    this.nodeChanged(rec.nodeKey);
    this.indexService(rec);
    txn.bump(SERVICES, nodeWatchKey(rec.nodeKey), ...instanceKeys(rec));
    if (existing) {
      txn.bump(...instanceKeys(existing));
      // Checks show their service's ID, name and tags.
      const shownByChecks =
        existing.ID !== rec.ID || existing.Service !== rec.Service || !plainEqual(existing.Tags, rec.Tags);
      if (shownByChecks && this.checksOf(rec.nodeKey).some((c) => c.serviceKey === serviceKey)) txn.bump(CHECKS);
    }
  }

  /** Delete a service instance and its checks. */
  deleteService(nodeName: string, serviceId: string, txn: Txn): void {
    const nodeKey = fold(nodeName);
    const serviceKey = fold(serviceId);
    const existing = this.services.get(nodeKey)?.get(serviceKey);
    if (!existing) return;
    for (const c of this.checksOf(nodeKey)) {
      if (c.serviceKey === serviceKey) this.deleteCheck(nodeKey, c.CheckID, txn);
    }
    this.removeIn(this.services, nodeKey, serviceKey);
    this.nodeChanged(nodeKey);
    this.unindexService(existing);
    txn.bump(SERVICES, nodeWatchKey(nodeKey), ...instanceKeys(existing));
  }

  /** Insert or update a check on an existing node (and existing service, if any); no-op when unchanged. */
  putCheck(data: CheckData, txn: Txn): void {
    const checkKey = fold(data.CheckID);
    const existing = this.checks.get(data.nodeKey)?.get(checkKey);
    if (existing && sameRecordData(existing, data)) return;
    const rec = stamp(data, existing, txn.index);
    this.putIn(this.checks, rec.nodeKey, checkKey, rec);
    addTo(this.byCheckId, checkKey, rec.nodeKey, rec);
    this.nodeChanged(rec.nodeKey);
    txn.bump(CHECKS, nodeWatchKey(rec.nodeKey), ...this.checkAudience(rec));
    if (existing) txn.bump(...this.checkAudience(existing));
  }

  deleteCheck(nodeName: string, checkId: string, txn: Txn): void {
    const nodeKey = fold(nodeName);
    const checkKey = fold(checkId);
    const existing = this.checks.get(nodeKey)?.get(checkKey);
    if (!existing) return;
    txn.bump(CHECKS, nodeWatchKey(nodeKey), ...this.checkAudience(existing));
    this.removeIn(this.checks, nodeKey, checkKey);
    removeFrom(this.byCheckId, checkKey, nodeKey);
    this.nodeChanged(nodeKey);
  }

  /** Watch keys of the instances whose health a check affects: its service, or every service on its node. */
  private checkAudience(check: CheckData): string[] {
    const services =
      check.serviceKey === ''
        ? this.servicesOf(check.nodeKey)
        : [this.services.get(check.nodeKey)?.get(check.serviceKey)].filter((s) => s !== undefined);
    return services.flatMap((s) => instanceKeys(s));
  }

  private indexService(rec: ServiceRecord): void {
    const id = instanceId(rec.nodeKey, fold(rec.ID));
    addTo(this.byName, fold(rec.Service), id, rec);
    for (const t of connectTargets(rec)) addTo(this.byConnect, t, id, rec);
  }

  private unindexService(rec: ServiceRecord): void {
    const id = instanceId(rec.nodeKey, fold(rec.ID));
    removeFrom(this.byName, fold(rec.Service), id);
    for (const t of connectTargets(rec)) removeFrom(this.byConnect, t, id);
  }

  /** addTo for `services`/`checks`: a bucket a snapshot may hold is copied before it changes. */
  private putIn<V>(outer: ShardedMap<string, Bucket<V>>, key: string, inner: string, value: V): void {
    let m = outer.get(key);
    // set() on a key already present keeps its place in the map's order, so dumps keep their order.
    if (!m) outer.set(key, (m = new Bucket<V>(this.epoch)));
    else if (m.epoch !== this.epoch) outer.set(key, (m = new Bucket(this.epoch, m)));
    if (!m.has(inner)) this.countRows(outer, 1);
    m.set(inner, value);
  }

  private countRows(outer: ShardedMap<string, Bucket<unknown>>, by: number): void {
    if (outer === this.services) this.serviceRows += by;
    else this.checkRows += by;
  }

  /** removeFrom for `services`/`checks`, copying a bucket a snapshot may hold. */
  private removeIn<V>(outer: ShardedMap<string, Bucket<V>>, key: string, inner: string): void {
    let m = outer.get(key);
    if (!m || !m.has(inner)) return;
    this.countRows(outer, -1);
    if (m.size === 1) {
      outer.delete(key);
      return;
    }
    if (m.epoch !== this.epoch) outer.set(key, (m = new Bucket(this.epoch, m)));
    m.delete(inner);
  }

  // ---- snapshot ----

  dump(): CatalogTableDump {
    return { nodes: this.allNodes(), services: this.allServices(), checks: this.allChecks() };
  }

  /**
   * dump() as of now, for a snapshot that serialises it later while writes go on: the rows (records
   * are replaced, never changed) and the per-node buckets as they are — a new epoch makes the next
   * write to each bucket copy it — so this costs an array of references per map, not a row copy.
   */
  capture(): Fields {
    this.epoch++;
    const nodes = [...this.nodes.values()];
    const services = [...this.services.values()];
    const checks = [...this.checks.values()];
    return new Fields([
      ['nodes', listStream(nodes)],
      ['services', flatStream(services)],
      ['checks', flatStream(checks)],
    ]);
  }

  static load(dump: CatalogTableDump): CatalogTable {
    return runSync(CatalogTable.loadSteps(dump));
  }

  /** load() a step of about `step` rows at a time (a restore rebuilds 100,000 nodes between other work). */
  static *loadSteps(dump: CatalogTableDump, step = 4096): Generator<void, CatalogTable, void> {
    const t = new CatalogTable();
    let done = 0;
    for (const n of dump.nodes) {
      const key = fold(n.Node);
      t.nodes.set(key, n);
      if (n.ID) t.nodeIds.set(fold(n.ID), key);
      if (++done % step === 0) yield;
    }
    for (const s of dump.services) {
      t.putIn(t.services, s.nodeKey, fold(s.ID), s);
      t.indexService(s);
      if (++done % step === 0) yield;
    }
    for (const c of dump.checks) {
      t.putIn(t.checks, c.nodeKey, fold(c.CheckID), c);
      addTo(t.byCheckId, fold(c.CheckID), c.nodeKey, c);
      if (++done % step === 0) yield;
    }
    return t;
  }

  // ---- self-check ----

  /** Descriptions of broken invariants; [] when the tables and their indexes agree. */
  invariants(): string[] {
    const problems: string[] = [];
    const indexOrder = (what: string, r: RaftIndexes) => {
      if (!(r.CreateIndex <= r.ModifyIndex)) problems.push(`${what}: CreateIndex ${r.CreateIndex} > ModifyIndex ${r.ModifyIndex}`);
    };
    for (const [key, n] of this.nodes) {
      if (key !== fold(n.Node)) problems.push(`node ${n.Node} filed under ${key}`);
      if (n.ID && this.nodeIds.get(fold(n.ID)) !== key) problems.push(`node ${n.Node}: ID ${n.ID} not indexed to it`);
      indexOrder(`node ${n.Node}`, n);
    }
    for (const [id, key] of this.nodeIds) {
      const n = this.nodes.get(key);
      if (!n || fold(n.ID) !== id) problems.push(`node ID ${id} indexed to ${key}, which does not carry it`);
    }
    let instances = 0;
    for (const [nodeKey, m] of this.services) {
      if (!this.nodes.has(nodeKey)) problems.push(`services on missing node ${nodeKey}`);
      if (m.size === 0) problems.push(`empty service map for node ${nodeKey}`);
      for (const [serviceKey, s] of m) {
        instances++;
        const id = instanceId(nodeKey, serviceKey);
        if (s.nodeKey !== nodeKey || fold(s.ID) !== serviceKey) problems.push(`service ${s.ID} filed under ${id}`);
        if (this.byName.get(fold(s.Service))?.get(id) !== s) problems.push(`service ${s.ID} on ${nodeKey} missing from name index`);
        for (const t of connectTargets(s)) {
          if (this.byConnect.get(t)?.get(id) !== s) problems.push(`service ${s.ID} on ${nodeKey} missing from connect index ${t}`);
        }
        indexOrder(`service ${s.ID} on ${nodeKey}`, s);
      }
    }
    let named = 0;
    for (const [name, m] of this.byName) {
      if (m.size === 0) problems.push(`empty name index entry ${name}`);
      for (const s of m.values()) {
        named++;
        if (fold(s.Service) !== name || this.services.get(s.nodeKey)?.get(fold(s.ID)) !== s) {
          problems.push(`name index ${name} holds a stale instance ${s.ID} on ${s.nodeKey}`);
        }
      }
    }
    if (named !== instances) problems.push(`name index holds ${named} instances, tables hold ${instances}`);
    if (this.serviceRows !== instances) problems.push(`service count says ${this.serviceRows}, tables hold ${instances}`);
    for (const [target, m] of this.byConnect) {
      if (m.size === 0) problems.push(`empty connect index entry ${target}`);
      for (const s of m.values()) {
        if (!connectTargets(s).includes(target) || this.services.get(s.nodeKey)?.get(fold(s.ID)) !== s) {
          problems.push(`connect index ${target} holds a stale instance ${s.ID} on ${s.nodeKey}`);
        }
      }
    }
    let checkCount = 0;
    for (const [nodeKey, m] of this.checks) {
      checkCount += m.size;
      for (const [checkKey, c] of m) {
        if (this.byCheckId.get(checkKey)?.get(nodeKey) !== c) problems.push(`check ${c.CheckID} on ${nodeKey} missing from check ID index`);
      }
      if (!this.nodes.has(nodeKey)) problems.push(`checks on missing node ${nodeKey}`);
      if (m.size === 0) problems.push(`empty check map for node ${nodeKey}`);
      for (const [checkKey, c] of m) {
        if (c.nodeKey !== nodeKey || fold(c.CheckID) !== checkKey) problems.push(`check ${c.CheckID} filed under ${nodeKey}/${checkKey}`);
        if (c.serviceKey !== '' && !this.services.get(nodeKey)?.has(c.serviceKey)) {
          problems.push(`check ${c.CheckID} on ${nodeKey} belongs to missing service ${c.serviceKey}`);
        }
        indexOrder(`check ${c.CheckID} on ${nodeKey}`, c);
      }
    }
    let byIdCount = 0;
    for (const [checkKey, m] of this.byCheckId) {
      if (m.size === 0) problems.push(`empty check ID index entry ${checkKey}`);
      byIdCount += m.size;
    }
    if (byIdCount !== checkCount) problems.push(`check ID index holds ${byIdCount} checks, tables hold ${checkCount}`);
    if (this.checkRows !== checkCount) problems.push(`check count says ${this.checkRows}, tables hold ${checkCount}`);
    return problems;
  }
}
