// kv.apply (one KV write, answering true/false) and kv.txn (up to 64 KV ops, all or nothing,
// answering Consul's {Results, Errors}). Both evaluate on a StagedKv first, so a refused or
// rolled-back command writes nothing.
import { CommandError } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { optObject } from '../input-fields';
import type { State } from '../state';
import { asUint64 } from '../uint64';
import { kvEntryOut, type KvEntryOut } from './kv-records';
import { commitEffects, KV_VERBS, resolvePending, StagedKv, type KvOp, type KvVerb } from './kv-ops';

/** The verbs a single KV write may use (Consul's KVSRequest ops). */
export type KvWriteVerb = Extract<KvVerb, 'set' | 'cas' | 'lock' | 'unlock' | 'delete' | 'delete-cas' | 'delete-tree'>;
const WRITE_VERBS = new Set<string>(['set', 'cas', 'lock', 'unlock', 'delete', 'delete-cas', 'delete-tree']);

export const MAX_TXN_OPS = 64;

export interface KvApplyCommand {
  op: KvOp & { Verb: KvWriteVerb };
}

export interface KvTxnCommand {
  ops: KvOp[];
}

export interface TxnResult {
  KV: KvEntryOut;
}

export interface TxnError {
  OpIndex: number;
  What: string;
}

export interface TxnReply {
  Results: TxnResult[] | null;
  Errors: TxnError[] | null;
}

/** Check one op's fields (the state machine never trusts decoded data). */
export function kvOpProblem(raw: unknown, path: string, verbs: ReadonlySet<string>): string | KvOp {
  let o: Record<string, unknown> | undefined;
  try {
    o = optObject(raw, path);
  } catch (err) {
    return (err as Error).message;
  }
  if (!o) return `Invalid field ${path}: expected an object`;
  if (typeof o.Verb !== 'string' || !verbs.has(o.Verb)) return `Invalid field ${path}.Verb: unknown KV verb ${JSON.stringify(o.Verb)}`;
  if (typeof o.Key !== 'string') return `Invalid field ${path}.Key: expected a string`;
  if (o.Value !== undefined && o.Value !== null && !(o.Value instanceof Uint8Array)) return `Invalid field ${path}.Value: expected bytes`;
  const flags = o.Flags === undefined || o.Flags === null ? 0 : asUint64(o.Flags);
  if (flags === undefined) return `Invalid field ${path}.Flags: expected an unsigned 64-bit integer`;
  if (o.Index !== undefined && o.Index !== null && !(typeof o.Index === 'number' && Number.isSafeInteger(o.Index) && o.Index >= 0)) {
    return `Invalid field ${path}.Index: expected a non-negative integer`;
  }
  if (o.Session !== undefined && o.Session !== null && typeof o.Session !== 'string') return `Invalid field ${path}.Session: expected a string`;
  return {
    Verb: o.Verb as KvVerb,
    Key: o.Key,
    Value: (o.Value as Uint8Array | null | undefined) ?? null,
    Flags: flags,
    Index: (o.Index as number | undefined) ?? 0,
    Session: (o.Session as string | undefined) ?? '',
  };
}

export const kvApply: CommandHandler<KvApplyCommand> = (state, cmd) => {
  const op = kvOpProblem(cmd.op, 'op', WRITE_VERBS);
  if (typeof op === 'string') return new CommandError(op);
  if (op.Key === '' && op.Verb !== 'delete-tree') return new CommandError('Missing key name');
  const staged = new StagedKv(state.kv, state.sessions);
  const outcome = staged.apply(op);
  if (!outcome.ok && outcome.hard) return new CommandError(outcome.what);
  return (txn) => {
    if (!outcome.ok) return false;
    commitEffects(state.kv, staged.effects, txn);
    return true;
  };
};

/** Evaluate a transaction's ops; `stage` holds the writes to commit when there is no error. */
export function evaluateTxn(state: State, ops: readonly KvOp[]): { staged: StagedKv; results: { entry: import('./kv-records').KvEntry; withValue: boolean }[]; errors: TxnError[] } {
  const staged = new StagedKv(state.kv, state.sessions);
  const results: { entry: import('./kv-records').KvEntry; withValue: boolean }[] = [];
  const errors: TxnError[] = [];
  ops.forEach((op, i) => {
    const outcome = staged.apply(op);
    if (!outcome.ok) errors.push({ OpIndex: i, What: outcome.what });
    else for (const e of outcome.shown) results.push({ entry: e, withValue: outcome.withValue });
  });
  return { staged, results, errors };
}

export const kvTxn: CommandHandler<KvTxnCommand> = (state, cmd) => {
  if (!Array.isArray(cmd.ops)) return new CommandError('Invalid field ops: expected an array');
  if (cmd.ops.length > MAX_TXN_OPS) return new CommandError(`Transaction contains too many operations (${cmd.ops.length} > ${MAX_TXN_OPS})`);
  const ops: KvOp[] = [];
  const allVerbs = new Set<string>(KV_VERBS);
  for (const [i, raw] of cmd.ops.entries()) {
    const op = kvOpProblem(raw, `ops[${i}]`, allVerbs);
    if (typeof op === 'string') return new CommandError(op);
    ops.push(op);
  }
  const { staged, results, errors } = evaluateTxn(state, ops);
  return (txn): TxnReply => {
    if (errors.length > 0) return { Results: null, Errors: errors };
    commitEffects(state.kv, staged.effects, txn);
    return { Results: results.map((r) => ({ KV: kvEntryOut(resolvePending(r.entry, txn.index), r.withValue) })), Errors: null };
  };
};
