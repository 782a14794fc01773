// The catalog as a transaction sees it (Consul 1.4's txnNode / txnService / txnCheck): the committed
// tables overlaid with the transaction's own writes, so later ops see earlier ones, while nothing is
// written until every op has succeeded. Each op either fails with Consul's text or stages its writes
// and says what to report; commit() replays the staged writes on the real tables. Rows written by
// the transaction carry PENDING indexes until the commit knows its Raft index.
import { fold } from '../catalog/keys';
import type { CheckData, CheckRecord, NodeData, NodeRecord, ServiceData, ServiceRecord } from '../catalog/records';
import { healthCheckOut, nodeOut, nodeServiceOut } from '../catalog/views';
import type { HealthCheckOut, NodeOut, NodeServiceOut } from '../catalog/outputs';
import { PENDING } from '../kv/kv-ops';
import { sameRecordData } from '../plain-data';
import type { State } from '../state';
import type { Txn } from '../txn';
import { withIndexes } from '../indexed-record';

export const CATALOG_VERBS = ['get', 'set', 'cas', 'delete', 'delete-cas'] as const;
export type CatalogVerb = (typeof CATALOG_VERBS)[number];

/** What a successful op reports, as a function of the commit's Raft index (PENDING → index). */
export type CatalogShown = { Node: NodeOut } | { Service: NodeServiceOut } | { Check: HealthCheckOut };
export type CatalogOutcome = { ok: true; shown?: (index: number) => CatalogShown } | { ok: false; what: string };

type Effect =
  | { putNode: NodeData }
  | { deleteNode: string }
  | { putService: ServiceData }
  | { deleteService: [string, string] }
  | { putCheck: CheckData }
  | { deleteCheck: [string, string] };

function pair(a: string, b: string): string {
  return `${fold(a)}\u0000${fold(b)}`;
}

function resolved<T extends { CreateIndex: number; ModifyIndex: number }>(rec: T, index: number): T {
  return {
    ...rec,
    CreateIndex: rec.CreateIndex === PENDING ? index : rec.CreateIndex,
    ModifyIndex: rec.ModifyIndex === PENDING ? index : rec.ModifyIndex,
  };
}

export class StagedCatalog {
  private readonly nodes = new Map<string, NodeRecord | null>();
  private readonly services = new Map<string, ServiceRecord | null>();
  private readonly checks = new Map<string, CheckRecord | null>();
  readonly effects: Effect[] = [];

  constructor(private readonly state: State) {}

  // ---- the overlaid view ----

  node(name: string): NodeRecord | undefined {
    const k = fold(name);
    if (this.nodes.has(k)) return this.nodes.get(k) ?? undefined;
    return this.state.catalog.node(name);
  }

  nodeById(id: string): NodeRecord | undefined {
    for (const n of this.nodes.values()) if (n && n.ID !== '' && fold(n.ID) === fold(id)) return n;
    const committed = this.state.catalog.nodeById(id);
    return committed && this.node(committed.Node)?.ID === committed.ID ? this.node(committed.Node) : undefined;
  }

  service(node: string, id: string): ServiceRecord | undefined {
    const k = pair(node, id);
    if (this.services.has(k)) return this.services.get(k) ?? undefined;
    return this.state.catalog.service(node, id);
  }

  check(node: string, id: string): CheckRecord | undefined {
    const k = pair(node, id);
    if (this.checks.has(k)) return this.checks.get(k) ?? undefined;
    return this.state.catalog.check(node, id);
  }

  private servicesOf(node: string): ServiceRecord[] {
    const out = new Map<string, ServiceRecord>();
    for (const s of this.state.catalog.servicesOf(node)) out.set(pair(node, s.ID), s);
    const prefix = `${fold(node)}\u0000`;
    for (const [k, s] of this.services) {
      if (!k.startsWith(prefix)) continue;
      if (s) out.set(k, s);
      else out.delete(k);
    }
    return [...out.values()];
  }

  private checksOf(node: string): CheckRecord[] {
    const out = new Map<string, CheckRecord>();
    for (const c of this.state.catalog.checksOf(node)) out.set(pair(node, c.CheckID), c);
    const prefix = `${fold(node)}\u0000`;
    for (const [k, c] of this.checks) {
      if (!k.startsWith(prefix)) continue;
      if (c) out.set(k, c);
      else out.delete(k);
    }
    return [...out.values()];
  }

  // ---- staged writes (the same no-op rule as the tables: an unchanged row keeps its indexes) ----

  private putNode(data: NodeData): NodeRecord {
    const existing = this.node(data.Node);
    if (existing && sameRecordData(existing, data)) return existing;
    const rec: NodeRecord = withIndexes(data, existing?.CreateIndex ?? PENDING, PENDING);
    this.nodes.set(fold(data.Node), rec);
    this.effects.push({ putNode: data });
    return rec;
  }

  private deleteNode(name: string): void {
    if (!this.node(name)) return;
    for (const c of this.checksOf(name)) this.checks.set(pair(name, c.CheckID), null);
    for (const s of this.servicesOf(name)) this.services.set(pair(name, s.ID), null);
    this.nodes.set(fold(name), null);
    this.effects.push({ deleteNode: name });
  }

  private putService(data: ServiceData): ServiceRecord {
    const k = `${data.nodeKey}\u0000${fold(data.ID)}`;
    const existing = this.services.has(k) ? (this.services.get(k) ?? undefined) : this.state.catalog.service(data.nodeKey, data.ID);
    if (existing && sameRecordData(existing, data)) return existing;
    const rec: ServiceRecord = withIndexes(data, existing?.CreateIndex ?? PENDING, PENDING);
    this.services.set(k, rec);
    this.effects.push({ putService: data });
    return rec;
  }

  private deleteService(node: string, id: string): void {
    if (!this.service(node, id)) return;
    for (const c of this.checksOf(node)) if (c.serviceKey === fold(id)) this.checks.set(pair(node, c.CheckID), null);
    this.services.set(pair(node, id), null);
    this.effects.push({ deleteService: [node, id] });
  }

  private putCheck(data: CheckData): CheckRecord {
    const k = `${data.nodeKey}\u0000${fold(data.CheckID)}`;
    const existing = this.checks.has(k) ? (this.checks.get(k) ?? undefined) : this.state.catalog.check(data.nodeKey, data.CheckID);
    if (existing && sameRecordData(existing, data)) return existing;
    const rec: CheckRecord = withIndexes(data, existing?.CreateIndex ?? PENDING, PENDING);
    this.checks.set(k, rec);
    this.effects.push({ putCheck: data });
    return rec;
  }

  private deleteCheck(node: string, id: string): void {
    if (!this.check(node, id)) return;
    this.checks.set(pair(node, id), null);
    this.effects.push({ deleteCheck: [node, id] });
  }

  // ---- the verbs ----

  /** `node` holds the op's fields; `modifyIndex` is the CAS index. */
  nodeOp(verb: CatalogVerb, node: NodeData, modifyIndex: number): CatalogOutcome {
    const name = node.Node;
    const current = () => (node.ID !== '' ? this.nodeById(node.ID) : this.node(name));
    const show = (rec: NodeRecord) => ({ ok: true as const, shown: (index: number) => ({ Node: nodeOut(resolved(rec, index)) }) });
    switch (verb) {
      case 'get': {
        const rec = current();
        return rec ? show(rec) : { ok: false, what: `node ${JSON.stringify(name)} doesn't exist` };
      }
      case 'set':
      case 'cas': {
        if (verb === 'cas' && (this.node(name)?.ModifyIndex ?? 0) !== modifyIndex) {
          return { ok: false, what: `failed to set node ${JSON.stringify(name)}, index is stale` };
        }
        const problem = this.renameProblem(node);
        if (problem) return { ok: false, what: problem };
        return show(this.putNode({ ...node, ID: node.ID || this.node(name)?.ID || '' }));
      }
      case 'delete':
        this.deleteNode(name);
        return { ok: true };
      case 'delete-cas': {
        const rec = this.node(name);
        if (!rec || rec.ModifyIndex !== modifyIndex) return { ok: false, what: `failed to delete node ${JSON.stringify(name)}, index is stale` };
        this.deleteNode(name);
        return { ok: true };
      }
    }
  }

  /** A node ID held by another node name renames that node (its old name goes), unless the new name has another ID. */
  private renameProblem(node: NodeData): string | undefined {
    if (node.ID === '') return undefined;
    const existing = this.node(node.Node);
    if (existing && existing.ID !== '' && fold(existing.ID) !== fold(node.ID)) {
      return `Error while renaming Node ID: ${JSON.stringify(node.ID)}: Node name ${node.Node} is reserved by node ${existing.ID} with name ${existing.Node}`;
    }
    const byId = this.nodeById(node.ID);
    if (byId && fold(byId.Node) !== fold(node.Node)) this.deleteNode(byId.Node);
    return undefined;
  }

  /** `service` is undefined for get/delete ops that name the instance only (`id`). */
  serviceOp(verb: CatalogVerb, nodeName: string, id: string, service: ServiceData | undefined, modifyIndex: number): CatalogOutcome {
    const where = `service ${JSON.stringify(id)} on node ${JSON.stringify(nodeName)}`;
    const show = (rec: ServiceRecord) => ({ ok: true as const, shown: (index: number) => ({ Service: nodeServiceOut(resolved(rec, index)) }) });
    switch (verb) {
      case 'get': {
        const rec = this.service(nodeName, id);
        return rec ? show(rec) : { ok: false, what: `${where} doesn't exist` };
      }
      case 'set':
      case 'cas': {
        if (!service) return { ok: false, what: 'Must provide service name' };
        if (verb === 'cas' && (this.service(nodeName, id)?.ModifyIndex ?? 0) !== modifyIndex) {
          return { ok: false, what: `failed to set ${where}, index is stale` };
        }
        if (!this.node(nodeName)) return { ok: false, what: 'Missing node registration' };
        return show(this.putService(service));
      }
      case 'delete':
        this.deleteService(nodeName, id);
        return { ok: true };
      case 'delete-cas': {
        const rec = this.service(nodeName, id);
        if (!rec || rec.ModifyIndex !== modifyIndex) return { ok: false, what: `failed to delete ${where}, index is stale` };
        this.deleteService(nodeName, id);
        return { ok: true };
      }
    }
  }

  checkOp(verb: CatalogVerb, nodeName: string, check: CheckData, serviceId: string, modifyIndex: number): CatalogOutcome {
    const where = `check ${JSON.stringify(check.CheckID)} on node ${JSON.stringify(nodeName)}`;
    const show = (rec: CheckRecord) => {
      const node = this.node(nodeName) as NodeRecord;
      const service = rec.serviceKey === '' ? undefined : this.service(nodeName, rec.serviceKey);
      return {
        ok: true as const,
        shown: (index: number) => ({ Check: healthCheckOut(resolved(node, index), resolved(rec, index), service && resolved(service, index)) }),
      };
    };
    switch (verb) {
      case 'get': {
        const rec = this.check(nodeName, check.CheckID);
        return rec ? show(rec) : { ok: false, what: `${where} doesn't exist` };
      }
      case 'set':
      case 'cas': {
        if (verb === 'cas' && (this.check(nodeName, check.CheckID)?.ModifyIndex ?? 0) !== modifyIndex) {
          return { ok: false, what: `failed to set ${where}, index is stale` };
        }
        if (!this.node(nodeName)) return { ok: false, what: 'Missing node registration' };
        if (serviceId !== '' && !this.service(nodeName, serviceId)) return { ok: false, what: 'Missing service registration' };
        return show(this.putCheck(check));
      }
      case 'delete':
        this.deleteCheck(nodeName, check.CheckID);
        return { ok: true };
      case 'delete-cas': {
        const rec = this.check(nodeName, check.CheckID);
        if (!rec || rec.ModifyIndex !== modifyIndex) return { ok: false, what: `failed to delete ${where}, index is stale` };
        this.deleteCheck(nodeName, check.CheckID);
        return { ok: true };
      }
    }
  }

  /** Replay the staged writes on the real tables. */
  commit(txn: Txn): void {
    const { state } = this;
    for (const e of this.effects) {
      if ('putNode' in e) state.catalog.putNode(e.putNode, txn);
      else if ('deleteNode' in e) state.deleteNode(e.deleteNode, txn);
      else if ('putService' in e) state.catalog.putService(e.putService, txn);
      else if ('deleteService' in e) state.catalog.deleteService(e.deleteService[0], e.deleteService[1], txn);
      else if ('putCheck' in e) state.catalog.putCheck(e.putCheck, txn);
      else state.catalog.deleteCheck(e.deleteCheck[0], e.deleteCheck[1], txn);
    }
  }
}
