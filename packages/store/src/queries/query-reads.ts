// Prepared-query reads and name resolution (consul-behaviour §4.2–4.3).
import type { IndexTable } from '../index-table';
import { queryResult, type QueryResult } from '../query-result';
import { isTemplate, QUERIES, type QueryRecord } from './query-records';
import type { QueryTable } from './query-table';
import { isUUID } from '@registry/acl';


function copy(q: QueryRecord): QueryRecord {
  return structuredClone(q);
}

export function queryGet(t: QueryTable, indexes: IndexTable, id: string): QueryResult<QueryRecord | null> {
  const q = t.get(id);
  return queryResult(indexes, [QUERIES], q ? copy(q) : null);
}

export function queryList(t: QueryTable, indexes: IndexTable): QueryResult<QueryRecord[]> {
  return queryResult(indexes, [QUERIES], t.all().map(copy));
}

export type Resolution =
  | { kind: 'static'; query: QueryRecord }
  /** A template selected for `name` (by exact name or longest prefix); it still has to be rendered. */
  | { kind: 'template'; query: QueryRecord }
  | { kind: 'template-by-id' }
  | { kind: 'none' };

/**
 * What an execute/explain of `idOrName` runs: a query by ID (templates may not be used by ID), else
 * the query or template with exactly that name, else the template with the longest name that
 * prefixes it (the empty-named catch-all matches everything). Names compare case-insensitively.
 */
export function resolveQuery(t: QueryTable, indexes: IndexTable, idOrName: string): QueryResult<Resolution> {
  const done = (r: Resolution) => queryResult(indexes, [QUERIES], r);
  if (isUUID(idOrName)) {
    const q = t.get(idOrName);
    if (q) return done(isTemplate(q) ? { kind: 'template-by-id' } : { kind: 'static', query: copy(q) });
  }
  const exact = t.named(idOrName);
  if (exact) return done({ kind: isTemplate(exact) ? 'template' : 'static', query: copy(exact) });
  const lower = idOrName.toLowerCase();
  let best: QueryRecord | undefined;
  for (const tpl of t.templates()) {
    const prefix = tpl.Name.toLowerCase();
    if (lower.startsWith(prefix) && (!best || prefix.length > best.Name.length)) best = tpl;
  }
  return done(best ? { kind: 'template', query: copy(best) } : { kind: 'none' });
}
