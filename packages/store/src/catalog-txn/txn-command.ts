// The `txn` command: Consul 1.4's /v1/txn with KV, Node, Service and Check operations in one atomic
// transaction. Every op is evaluated on staged views (StagedKv, StagedCatalog) in order, so later
// ops see earlier ones; only when none failed does the commit write, all at one Raft index. A
// malformed op refuses the whole command (400); an op that fails on the state (a stale index, a
// missing row) rolls the transaction back and is reported in Errors (409).
import { CommandError, Rejection } from '../command-error';
import { normalizeCheck } from '../catalog/check-definition';
import { fold } from '../catalog/keys';
import { nodeIdProblem } from '../catalog/node-id';
import type { CheckData, NodeData, ServiceData } from '../catalog/records';
import { normalizeService } from '../catalog/service-definition';
import { metaProblem } from '../catalog/service-meta';
import type { CommandHandler } from '../fsm/command-handler';
import { int, optObject, str, strMap, type PlainObject } from '../input-fields';
import { kvOpProblem, MAX_TXN_OPS, type TxnError } from '../kv/kv-commands';
import { commitEffects, KV_VERBS, resolvePending, StagedKv, type KvOp } from '../kv/kv-ops';
import { kvEntryOut, type KvEntryOut } from '../kv/kv-records';
import type { State } from '../state';
import { CATALOG_VERBS, StagedCatalog, type CatalogOutcome, type CatalogShown, type CatalogVerb } from './staged-catalog';

/** One operation as the HTTP layer shaped it (Consul's TxnOp: exactly one member is set). */
export type TxnOpInput =
  | { KV: KvOp }
  | { Node: { Verb: CatalogVerb; Node: PlainObject } }
  | { Service: { Verb: CatalogVerb; Node: string; Service: PlainObject } }
  | { Check: { Verb: CatalogVerb; Check: PlainObject } };

export interface TxnCommand {
  ops: TxnOpInput[];
}

export type TxnOpResult = { KV: KvEntryOut } | CatalogShown;

export interface FullTxnReply {
  Results: TxnOpResult[] | null;
  Errors: TxnError[] | null;
}

const KV_VERB_SET = new Set<string>(KV_VERBS);
const CATALOG_VERB_SET = new Set<string>(CATALOG_VERBS);

type Evaluate = (kv: StagedKv, catalog: StagedCatalog) => { ok: true; shown: ((index: number) => TxnOpResult)[] } | { ok: false; what: string };

function verbOf(o: PlainObject, path: string): CatalogVerb {
  const verb = o.Verb;
  if (typeof verb !== 'string' || !CATALOG_VERB_SET.has(verb)) throw new Rejection(`Invalid field ${path}.Verb: unknown verb ${JSON.stringify(verb)}`);
  return verb as CatalogVerb;
}

function fromCatalog(outcome: CatalogOutcome): ReturnType<Evaluate> {
  if (!outcome.ok) return outcome;
  return { ok: true, shown: outcome.shown ? [outcome.shown] : [] };
}

/** A write op's state-independent problem (a bad service definition) is reported as that op's error, as Consul does. */
function rejected(fn: () => ReturnType<Evaluate>): ReturnType<Evaluate> {
  try {
    return fn();
  } catch (err) {
    if (err instanceof Rejection) return { ok: false, what: err.message };
    throw err;
  }
}

function nodeEvaluate(state: State, raw: PlainObject, path: string): Evaluate {
  const verb = verbOf(raw, path);
  const n = optObject(raw.Node, `${path}.Node`) ?? {};
  const p = `${path}.Node`;
  const name = str(n, 'Node', p);
  if (name === '') throw new Rejection('Must provide node');
  const id = str(n, 'ID', p);
  const idProblem = id === '' ? undefined : nodeIdProblem(id);
  if (idProblem) throw new Rejection(`Bad node ID: ${idProblem}`);
  const node: NodeData = {
    ID: id,
    Node: name,
    Address: str(n, 'Address', p),
    Datacenter: state.datacenter,
    TaggedAddresses: strMap(n, 'TaggedAddresses', p),
    Meta: strMap(n, 'Meta', p),
  };
  const modifyIndex = int(n, 'ModifyIndex', p);
  return (_kv, catalog) => fromCatalog(catalog.nodeOp(verb, node, modifyIndex));
}

function serviceEvaluate(raw: PlainObject, path: string): Evaluate {
  const verb = verbOf(raw, path);
  const nodeName = str(raw, 'Node', path);
  if (nodeName === '') throw new Rejection('Must provide node');
  const s = optObject(raw.Service, `${path}.Service`) ?? {};
  const id = str(s, 'ID', `${path}.Service`) || str(s, 'Service', `${path}.Service`);
  const modifyIndex = int(s, 'ModifyIndex', `${path}.Service`);
  return (_kv, catalog) =>
    rejected(() => {
      let service: ServiceData | undefined;
      if (verb === 'set' || verb === 'cas') {
        service = normalizeService(s, fold(nodeName));
        const problem = metaProblem(service.Meta);
        if (problem) return { ok: false, what: `Invalid Service Meta for node ${nodeName} and serviceID ${service.ID}: ${problem}` };
      }
      return fromCatalog(catalog.serviceOp(verb, nodeName, id, service, modifyIndex));
    });
}

function checkEvaluate(raw: PlainObject, path: string): Evaluate {
  const verb = verbOf(raw, path);
  const c = optObject(raw.Check, `${path}.Check`) ?? {};
  const normal = normalizeCheck(c, '', `${path}.Check`);
  if (normal.node === '') throw new Rejection('Must provide node');
  const check: CheckData = {
    nodeKey: fold(normal.node),
    CheckID: normal.CheckID,
    Name: normal.Name,
    Status: normal.Status,
    Notes: normal.Notes,
    Output: normal.Output,
    serviceKey: fold(normal.ServiceID),
    Definition: normal.Definition,
  };
  const modifyIndex = int(c, 'ModifyIndex', `${path}.Check`);
  return (_kv, catalog) => fromCatalog(catalog.checkOp(verb, normal.node, check, normal.ServiceID, modifyIndex));
}

function kvEvaluate(op: KvOp): Evaluate {
  return (kv) => {
    const outcome = kv.apply(op);
    if (!outcome.ok) return outcome;
    return {
      ok: true,
      shown: outcome.shown.map((e) => (index: number) => ({ KV: kvEntryOut(resolvePending(e, index), outcome.withValue) })),
    };
  };
}

function opEvaluate(state: State, raw: unknown, i: number): Evaluate {
  const path = `ops[${i}]`;
  const o = optObject(raw, path);
  if (!o) throw new Rejection(`Invalid field ${path}: expected an object`);
  const members = ['KV', 'Node', 'Service', 'Check'].filter((m) => o[m] !== undefined && o[m] !== null);
  if (members.length !== 1) throw new Rejection(`Invalid field ${path}: expected exactly one of KV, Node, Service, Check`);
  const member = optObject(o[members[0]], `${path}.${members[0]}`) as PlainObject;
  switch (members[0]) {
    case 'KV': {
      const op = kvOpProblem(member, `${path}.KV`, KV_VERB_SET);
      if (typeof op === 'string') throw new Rejection(op);
      return kvEvaluate(op);
    }
    case 'Node':
      return nodeEvaluate(state, member, `${path}.Node`);
    case 'Service':
      return serviceEvaluate(member, `${path}.Service`);
    default:
      return checkEvaluate(member, `${path}.Check`);
  }
}

/** The node a staged catalog write touched. */
function nodeOfEffect(e: StagedCatalog['effects'][number]): string {
  if ('putNode' in e) return e.putNode.Node;
  if ('deleteNode' in e) return e.deleteNode;
  if ('putService' in e) return e.putService.nodeKey;
  if ('deleteService' in e) return e.deleteService[0];
  if ('putCheck' in e) return e.putCheck.nodeKey;
  return e.deleteCheck[0];
}

/**
 * Sessions on `nodes` that the staged catalog no longer supports (node gone; a check of theirs gone
 * or critical) end inside the transaction, as Consul's deleteNodeTxn / ensureCheckTxn delete them in
 * the same state-store transaction: a later lock op with one of them fails "invalid session".
 */
function endInvalidatedSessions(state: State, catalog: StagedCatalog, kv: StagedKv, nodes: Iterable<string>): void {
  for (const node of new Set([...nodes].map(fold))) {
    for (const s of state.sessions.ofNode(node)) {
      const valid = !!catalog.node(s.Node) && (s.Checks ?? []).every((id) => {
        const c = catalog.check(s.Node, id);
        return !!c && c.Status !== 'critical';
      });
      if (!valid) kv.endSession(s);
    }
  }
}

/** Every op evaluated in order on staged views; nothing is written. */
function evaluateOps(state: State, rawOps: readonly unknown[]) {
  const evaluators = rawOps.map((raw, i) => opEvaluate(state, raw, i));
  const kv = new StagedKv(state.kv, state.sessions);
  const catalog = new StagedCatalog(state);
  const shown: ((index: number) => TxnOpResult)[] = [];
  const errors: TxnError[] = [];
  evaluators.forEach((evaluate, i) => {
    const before = catalog.effects.length;
    const outcome = evaluate(kv, catalog);
    if (outcome.ok) shown.push(...outcome.shown);
    else errors.push({ OpIndex: i, What: outcome.what });
    if (catalog.effects.length > before) endInvalidatedSessions(state, catalog, kv, catalog.effects.slice(before).map(nodeOfEffect));
  });
  return { kv, catalog, shown, errors };
}

/**
 * A transaction of read ops only (KV read verbs, catalog `get`) answered from this state without a
 * write: the same evaluation as the command, nothing staged to commit. Throws Rejection for a
 * malformed op, as the command refuses it.
 */
export function txnReadOnly(state: State, ops: readonly TxnOpInput[]): FullTxnReply {
  const { shown, errors } = evaluateOps(state, ops);
  // Read ops stage nothing: no PENDING index is left to resolve, so any index shows them as they are.
  return errors.length > 0 ? { Results: null, Errors: errors } : { Results: shown.map((show) => show(0)), Errors: null };
}

export const txnApply: CommandHandler<TxnCommand> = (state, cmd) => {
  if (!Array.isArray(cmd.ops)) return new CommandError('Invalid field ops: expected an array');
  if (cmd.ops.length > MAX_TXN_OPS) return new CommandError(`Transaction contains too many operations (${cmd.ops.length} > ${MAX_TXN_OPS})`);
  const { kv, catalog, shown, errors } = evaluateOps(state, cmd.ops);
  return (txn): FullTxnReply => {
    if (errors.length > 0) return { Results: null, Errors: errors };
    catalog.commit(txn);
    commitEffects(state.kv, kv.effects, txn);
    return { Results: shown.map((show) => show(txn.index)), Errors: null };
  };
};
