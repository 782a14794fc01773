// Area reads: the areas as the API shows them, and the learned peer servers (server-side only).
import type { IndexTable } from '../index-table';
import { queryResult, type QueryResult } from '../query-result';
import { AREAS, AREA_SERVERS, areaOut, type AreaOut, type AreaServers } from './area-records';
import type { AreaTable } from './area-table';

export function areaList(t: AreaTable, indexes: IndexTable): QueryResult<AreaOut[]> {
  return queryResult(indexes, [AREAS], t.all().map(areaOut));
}

export function areaGet(t: AreaTable, indexes: IndexTable, id: string): QueryResult<AreaOut | null> {
  const a = t.get(id);
  return queryResult(indexes, [AREAS], a ? areaOut(a) : null);
}

/** Every area with the peer servers learned through it. */
export function areaServerList(t: AreaTable, indexes: IndexTable): QueryResult<AreaServers[]> {
  const value = t.all().map((a) => ({ AreaID: a.ID, PeerDatacenter: a.PeerDatacenter, Servers: t.serversOf(a.ID) }));
  return queryResult(indexes, [AREAS, AREA_SERVERS], value);
}
