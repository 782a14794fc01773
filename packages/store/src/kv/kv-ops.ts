// The KV verbs (Consul's KVOp and txn KV verbs), evaluated against a view of the table without
// writing it. A single KV write and a transaction share this code: the handler evaluates every op on
// a staged overlay (so later ops see earlier ones), and only if all succeed does the commit replay
// the staged writes. Entries written by the transaction carry PENDING indexes until the commit
// knows its Raft index.
import type { SessionRecord } from '../sessions/session-records';
import { MAX_LOCK_DELAY_NS } from '../sessions/session-records';
import { kvEntry, type KvEntry, type KvEntryData } from './kv-records';
import type { KvTable } from './kv-table';
import type { Uint64 } from '../uint64';

export const KV_VERBS = [
  'set',
  'cas',
  'lock',
  'unlock',
  'delete',
  'delete-cas',
  'delete-tree',
  'get',
  'get-tree',
  'check-index',
  'check-session',
  'check-not-exists',
] as const;
export type KvVerb = (typeof KV_VERBS)[number];

/** Verbs that change nothing: a transaction of only these is a read. */
export const KV_READ_VERBS: ReadonlySet<KvVerb> = new Set<KvVerb>(['get', 'get-tree', 'check-index', 'check-session', 'check-not-exists']);

export interface KvOp {
  Verb: KvVerb;
  Key: string;
  Value?: Uint8Array | null;
  Flags?: Uint64;
  /** The CAS / check index. */
  Index?: number;
  Session?: string;
}

/** Stands for "this transaction's Raft index" in entries staged before the commit knows it. */
export const PENDING = -1;

export type OpOutcome =
  /** `shown`: entries to report (with `withValue` for reads). */
  | { ok: true; shown: KvEntry[]; withValue: boolean }
  /** `hard`: the request is invalid (a single write fails with an error instead of answering false). */
  | { ok: false; what: string; hard: boolean };

/** Where a staged view finds sessions (the sessions table; a transaction may hide ended ones). */
export interface SessionLookup {
  get(id: string): SessionRecord | undefined;
}

type Effect = { put: KvEntryData } | { del: string } | { lockDelay: string; ms: number };

/** The table as a transaction sees it: committed entries overlaid with its own staged writes. */
export class StagedKv {
  private readonly overlay = new Map<string, KvEntry | null>();
  readonly effects: Effect[] = [];
  /** Sessions ended by an earlier op of this transaction (lower-case IDs). */
  private readonly ended = new Set<string>();

  constructor(
    private readonly table: KvTable,
    private readonly sessions: SessionLookup,
  ) {}

  private session(id: string): SessionRecord | undefined {
    return this.ended.has(id.toLowerCase()) ? undefined : this.sessions.get(id);
  }

  /**
   * Session `rec` was invalidated by an earlier op of this transaction (its node deleted, a check of
   * it gone or critical): as Consul's deleteSessionTxn inside the same transaction, later ops no
   * longer find it, and the locks it holds are released (or their keys deleted, Behavior=delete)
   * with their lock-delay. The commit's own invalidation then finds nothing left to release.
   */
  endSession(rec: SessionRecord): void {
    const id = rec.ID.toLowerCase();
    if (this.ended.has(id)) return;
    this.ended.add(id);
    const keys = new Set(this.table.heldBy(rec.ID));
    for (const [k, e] of this.overlay) if (e && e.Session.toLowerCase() === id) keys.add(k);
    const delayMs = Math.min(rec.LockDelay, MAX_LOCK_DELAY_NS) / 1e6;
    for (const key of [...keys].sort()) {
      const e = this.get(key);
      if (!e || e.Session.toLowerCase() !== id) continue;
      if (rec.Behavior === 'delete') this.del(key);
      else this.put({ Key: e.Key, Flags: e.Flags, Value: e.Value, Session: '', LockIndex: e.LockIndex });
      if (delayMs > 0) this.effects.push({ lockDelay: key, ms: delayMs });
    }
  }

  get(key: string): KvEntry | undefined {
    if (this.overlay.has(key)) return this.overlay.get(key) ?? undefined;
    return this.table.get(key);
  }

  list(prefix: string): KvEntry[] {
    const merged = new Map<string, KvEntry>();
    for (const e of this.table.list(prefix)) merged.set(e.Key, e);
    for (const [k, e] of this.overlay) {
      if (!k.startsWith(prefix)) continue;
      if (e) merged.set(k, e);
      else merged.delete(k);
    }
    return [...merged.values()].sort((a, b) => (a.Key < b.Key ? -1 : a.Key > b.Key ? 1 : 0));
  }

  private put(data: KvEntryData): KvEntry {
    const existing = this.get(data.Key);
    const entry = kvEntry(data, existing ? existing.CreateIndex : PENDING, PENDING);
    this.overlay.set(data.Key, entry);
    this.effects.push({ put: data });
    return entry;
  }

  private del(key: string): void {
    if (!this.get(key)) return;
    this.overlay.set(key, null);
    this.effects.push({ del: key });
  }

  /** Evaluate one op, staging its writes when it succeeds. */
  apply(op: KvOp): OpOutcome {
    const key = op.Key;
    const value = op.Value ?? null;
    const flags = op.Flags ?? 0;
    const index = op.Index ?? 0;
    const existing = this.get(key);
    const wrote = (e: KvEntry): OpOutcome => ({ ok: true, shown: [e], withValue: false });
    const none: OpOutcome = { ok: true, shown: [], withValue: false };
    const fail = (what: string, hard = false): OpOutcome => ({ ok: false, what, hard });
    switch (op.Verb) {
      case 'set':
        return wrote(this.put({ Key: key, Flags: flags, Value: value, Session: existing?.Session ?? '', LockIndex: existing?.LockIndex ?? 0 }));
      case 'cas': {
        const current = existing ? existing.ModifyIndex : 0;
        if (current !== index) return fail(`failed to set key ${JSON.stringify(key)}, index is stale`);
        return wrote(this.put({ Key: key, Flags: flags, Value: value, Session: existing?.Session ?? '', LockIndex: existing?.LockIndex ?? 0 }));
      }
      case 'lock': {
        // Consul's kvsLockTxn / kvsUnlockTxn: a lock op must name a session.
        if (!op.Session) return fail('missing session', true);
        const session = this.session(op.Session ?? '');
        if (!session) return fail(`invalid session ${JSON.stringify(op.Session ?? '')}`, true);
        let lockIndex = (existing?.LockIndex ?? 0) + 1;
        if (existing?.Session) {
          if (existing.Session !== session.ID) return fail(`failed to lock key ${JSON.stringify(key)}, lock is already held`);
          lockIndex = existing.LockIndex;
        }
        return wrote(this.put({ Key: key, Flags: flags, Value: value, Session: session.ID, LockIndex: lockIndex }));
      }
      case 'unlock': {
        if (!op.Session) return fail('missing session', true);
        const holder = existing?.Session ?? '';
        if (!existing || holder.toLowerCase() !== (op.Session ?? '').toLowerCase()) {
          return fail(`failed to unlock key ${JSON.stringify(key)}, lock isn't held, or is held by another session`);
        }
        return wrote(this.put({ Key: key, Flags: flags, Value: value, Session: '', LockIndex: existing.LockIndex }));
      }
      case 'delete':
        this.del(key);
        return none;
      case 'delete-cas':
        // A key that is already gone counts as deleted (Consul answers true).
        if (existing && existing.ModifyIndex !== index) return fail(`failed to delete key ${JSON.stringify(key)}, index is stale`);
        this.del(key);
        return none;
      case 'delete-tree':
        for (const e of this.list(key)) this.del(e.Key);
        return none;
      case 'get':
        if (!existing) return fail(`key ${JSON.stringify(key)} doesn't exist`);
        return { ok: true, shown: [existing], withValue: true };
      case 'get-tree':
        return { ok: true, shown: this.list(key), withValue: true };
      case 'check-index':
        if (!existing) return fail(`key ${JSON.stringify(key)} doesn't exist`);
        if (existing.ModifyIndex !== index) return fail(`current modify index ${existing.ModifyIndex} != ${index}`);
        return wrote(existing);
      case 'check-session': {
        if (!existing) return fail(`key ${JSON.stringify(key)} doesn't exist`);
        if (existing.Session.toLowerCase() !== (op.Session ?? '').toLowerCase()) {
          return fail(`current session ${JSON.stringify(existing.Session)} != ${JSON.stringify(op.Session ?? '')}`);
        }
        return wrote(existing);
      }
      case 'check-not-exists':
        if (existing) return fail(`key ${JSON.stringify(key)} exists`);
        return none;
      default:
        return fail(`unknown KV verb ${JSON.stringify((op as { Verb: unknown }).Verb)}`, true);
    }
  }
}

/** Replay staged writes on the table (the commit of a KV write or transaction). */
export function commitEffects(table: KvTable, effects: readonly Effect[], txn: import('../txn').Txn): void {
  for (const e of effects) {
    if ('put' in e) table.put(e.put, txn);
    else if ('del' in e) table.delete(e.del, txn);
    else table.setLockDelay(e.lockDelay, txn.appliedAt + e.ms);
  }
}

/** An entry as finally committed: PENDING indexes become the Raft index. */
export function resolvePending(e: KvEntry, index: number): KvEntry {
  if (e.CreateIndex !== PENDING && e.ModifyIndex !== PENDING) return e;
  return kvEntry(e, e.CreateIndex === PENDING ? index : e.CreateIndex, e.ModifyIndex === PENDING ? index : e.ModifyIndex);
}
