// CA reads: the roots (never a private key) and the configuration (never the cluster id).
import type { IndexTable } from '../index-table';
import { queryResult, type QueryResult } from '../query-result';
import { CA_CONFIG, CA_ROOTS, type CaTable } from './ca-table';
import { rootOut, type CaConfigOut, type CaRootsOut } from './records';

/** `{ActiveRootID: "", TrustDomain: "", Roots: []}` before the CA is initialised. */
export function caRoots(table: CaTable, indexes: IndexTable): QueryResult<CaRootsOut> {
  const config = table.config;
  const roots = table.roots;
  return queryResult(indexes, [CA_ROOTS], {
    ActiveRootID: roots.find((r) => r.Active)?.ID ?? '',
    TrustDomain: config?.TrustDomain ?? '',
    Roots: roots.map(rootOut),
  });
}

export function caConfig(table: CaTable, indexes: IndexTable): QueryResult<CaConfigOut | null> {
  const c = table.config;
  return queryResult(indexes, [CA_CONFIG], c && { Provider: c.Provider, Config: c.Config, CreateIndex: c.CreateIndex, ModifyIndex: c.ModifyIndex });
}
