// A key/value entry as the store keeps it (Consul's DirEntry). Values are raw bytes; the HTTP layer
// shows them base64-encoded in JSON, as Go does for []byte.
import type { Uint64 } from '../uint64';

export interface KvEntry {
  Key: string;
  Flags: Uint64;
  /** null for an empty value (Go's nil slice: JSON `null`). */
  Value: Uint8Array | null;
  /** The session holding the lock on this key, '' when none. */
  Session: string;
  /** How many times a lock on this key has been acquired (by a new holder). */
  LockIndex: number;
  CreateIndex: number;
  ModifyIndex: number;
}

/** What a write stores of an entry: all but its indexes. */
export type KvEntryData = Omit<KvEntry, 'CreateIndex' | 'ModifyIndex'>;

/**
 * An entry as one object literal, so that every entry in the table has the same hidden class with
 * all seven fields in the object itself. A spread with indexes added after it gave every entry a map
 * of its own (indexed-record.ts says why); one shape also keeps the reads of applied and restored
 * entries monomorphic. `value` replaces d.Value (a restore adopts the value into its arenas) without
 * a second object made only to carry it.
 */
export function kvEntry(d: KvEntryData, createIndex: number, modifyIndex: number, value: Uint8Array | null = d.Value): KvEntry {
  return { Key: d.Key, Flags: d.Flags, Value: value, Session: d.Session, LockIndex: d.LockIndex, CreateIndex: createIndex, ModifyIndex: modifyIndex };
}

/** What a write supplies; indexes, lock index and (except for lock ops) the session are the store's. */
export interface KvInput {
  Key: string;
  Flags?: Uint64;
  Value?: Uint8Array | null;
  Session?: string;
}

/** The JSON shape of an entry on the API (`Session` only when held; `Value` base64 or null). */
export interface KvEntryOut {
  LockIndex: number;
  Key: string;
  Flags: Uint64;
  Value: string | null;
  Session?: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export function kvEntryOut(e: KvEntry, withValue = true): KvEntryOut {
  const out: KvEntryOut = {
    LockIndex: e.LockIndex,
    Key: e.Key,
    Flags: e.Flags,
    Value: withValue && e.Value && e.Value.length > 0 ? Buffer.from(e.Value).toString('base64') : null,
    CreateIndex: e.CreateIndex,
    ModifyIndex: e.ModifyIndex,
  };
  if (e.Session) out.Session = e.Session;
  return out;
}
