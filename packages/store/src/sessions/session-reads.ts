// Session reads (consul-behaviour §3.2): every read's index is the sessions table's.
import type { IndexTable } from '../index-table';
import { queryResult, type QueryResult } from '../query-result';
import { SESSIONS, type SessionRecord } from './session-records';
import type { SessionTable } from './session-table';

function copy(s: SessionRecord): SessionRecord {
  return { ...s, Checks: s.Checks === null ? null : [...s.Checks] };
}

/** The session as a one-element array, or null when unknown (the spec; Consul answers []). */
export function sessionInfo(t: SessionTable, indexes: IndexTable, id: string): QueryResult<SessionRecord[] | null> {
  const s = t.get(id);
  return queryResult(indexes, [SESSIONS], s ? [copy(s)] : null);
}

export function sessionList(t: SessionTable, indexes: IndexTable): QueryResult<SessionRecord[]> {
  return queryResult(indexes, [SESSIONS], t.all().map(copy));
}

export function sessionsOfNode(t: SessionTable, indexes: IndexTable, node: string): QueryResult<SessionRecord[]> {
  return queryResult(indexes, [SESSIONS], t.ofNode(node).map(copy));
}
