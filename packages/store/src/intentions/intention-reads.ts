// Intention reads: list, one by ID, and match (all rows covering a name on one side).
import type { IndexTable } from '../index-table';
import { queryResult, type QueryResult } from '../query-result';
import { INTENTIONS, type IntentionTable, type MatchSide } from './intention-table';
import { DEFAULT_NAMESPACE, intentionOut, type IntentionOut } from './records';

export function intentionList(table: IntentionTable, indexes: IndexTable): QueryResult<IntentionOut[]> {
  return queryResult(indexes, [INTENTIONS], table.all().map(intentionOut));
}

export function intentionGet(table: IntentionTable, indexes: IndexTable, id: string): QueryResult<IntentionOut | null> {
  const r = table.get(id);
  return queryResult(indexes, [INTENTIONS], r ? intentionOut(r) : null);
}

/** A match entry: `ns/name`, or a plain name in the default namespace. */
export interface MatchEntry {
  namespace?: string;
  name: string;
}

/** One list per entry, in the order given, each in evaluation order. */
export function intentionMatch(table: IntentionTable, indexes: IndexTable, side: MatchSide, entries: MatchEntry[]): QueryResult<IntentionOut[][]> {
  const value = entries.map((e) => table.match(side, e.namespace || DEFAULT_NAMESPACE, e.name).map(intentionOut));
  return queryResult(indexes, [INTENTIONS], value);
}
