// Event reads: the ring, oldest first, optionally only the events of one name.
import type { IndexTable } from '../index-table';
import { queryResult, type QueryResult } from '../query-result';
import { EVENTS, type EventOut } from './event-records';
import type { EventTable } from './event-table';

export function eventList(t: EventTable, indexes: IndexTable, name?: string): QueryResult<EventOut[]> {
  const all = t.all();
  return queryResult(indexes, [EVENTS], name ? all.filter((e) => e.Name === name) : all);
}
