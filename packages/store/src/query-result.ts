import type { IndexTable } from './index-table';

/**
 * A read's answer: `keys` are the watch keys the value depends on (pass them to Store.watch to block
 * for a change) and `index` is the highest index among them, so unrelated writes do not move it.
 */
export interface QueryResult<T> {
  index: number;
  value: T;
  keys: string[];
}

export function queryResult<T>(indexes: IndexTable, keys: readonly string[], value: T): QueryResult<T> {
  const unique = [...new Set(keys)];
  return { index: indexes.max(unique), value, keys: unique };
}
