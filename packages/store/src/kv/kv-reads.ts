// KV reads (consul-behaviour Appendix A): a single key's index is its ModifyIndex (the table index
// when missing); a prefix read's is the newest entry or tombstone under the prefix. Each read
// watches its own prefix key, which every write below it bumps.
import type { QueryResult } from '../query-result';
import { kvPrefixWatchKey } from './kv-keys';
import type { KvEntry } from './kv-records';
import type { KvTable } from './kv-table';

export function kvGet(t: KvTable, key: string): QueryResult<KvEntry | null> {
  const e = t.get(key);
  return { index: e ? e.ModifyIndex : t.tableIndex, value: e ?? null, keys: [kvPrefixWatchKey(key)] };
}

export function kvList(t: KvTable, prefix: string): QueryResult<KvEntry[]> {
  const { entries, index } = t.listWithIndex(prefix);
  return { index, value: entries, keys: [kvPrefixWatchKey(prefix)] };
}

/**
 * Keys under `prefix`; with a separator, keys are cut just after the first separator following the
 * prefix and repeated cuts collapse into one ("folders").
 */
export function kvKeys(t: KvTable, prefix: string, separator: string): QueryResult<string[]> {
  const keys: string[] = [];
  let last: string | undefined;
  for (const e of t.list(prefix)) {
    let k = e.Key;
    if (separator !== '') {
      const at = k.indexOf(separator, prefix.length);
      if (at >= 0) k = k.slice(0, at + separator.length);
    }
    if (k === last) continue;
    keys.push(k);
    last = k;
  }
  return { index: t.prefixIndex(prefix), value: keys, keys: [kvPrefixWatchKey(prefix)] };
}
