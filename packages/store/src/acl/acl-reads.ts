// Reads of the ACL tables, with the watch keys a blocking query needs. Authorization and
// redaction are the server's business; these answer with everything.
import type { TokenLookup } from '@registry/acl';
import type { IndexTable } from '../index-table';
import { queryResult, type QueryResult } from '../query-result';
import type { AclTable } from './acl-table';
import type { ReplicatedToken } from './commands';
import { ACL_POLICIES, ACL_TOKENS } from './keys';
import type { LegacyAclOut, PolicyListEntry, PolicyOut, TokenListEntry, TokenOut } from './records';
import { legacyAclOut, policyListEntry, policyOut, tokenListEntry, tokenOut } from './views';

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Token reads show policy names, so they change with either table. */
const TOKEN_KEYS = [ACL_TOKENS, ACL_POLICIES];

export function aclToken(table: AclTable, indexes: IndexTable, accessorID: string): QueryResult<TokenOut | null> {
  const rec = table.token(accessorID);
  return queryResult(indexes, TOKEN_KEYS, rec ? tokenOut(table, rec) : null);
}

export function aclTokenBySecret(table: AclTable, indexes: IndexTable, secret: string): QueryResult<TokenOut | null> {
  const rec = table.tokenBySecret(secret);
  return queryResult(indexes, TOKEN_KEYS, rec ? tokenOut(table, rec) : null);
}

/** Every token without its secret; with `policy`, only tokens linking that policy ID. */
export function aclTokens(table: AclTable, indexes: IndexTable, q: { policy?: string }): QueryResult<TokenListEntry[]> {
  const policy = q.policy?.toLowerCase();
  const tokens = table
    .allTokens()
    .filter((t) => !policy || t.Policies.some((l) => l.ID.toLowerCase() === policy))
    .sort((a, b) => byId(a.AccessorID, b.AccessorID));
  return queryResult(indexes, TOKEN_KEYS, tokens.map((t) => tokenListEntry(table, t)));
}

/** The legacy API's info: the token with that secret as a one-element list, or [] (Consul's ACL.Get). */
export function aclLegacyInfo(table: AclTable, indexes: IndexTable, secret: string): QueryResult<LegacyAclOut[]> {
  const rec = table.tokenBySecret(secret);
  const out = rec ? legacyAclOut(rec) : null;
  return queryResult(indexes, [ACL_TOKENS], out ? [out] : []);
}

/** The legacy API's list: every token with a Type, by SecretID (Consul's ACL.List, its "id" index). */
export function aclLegacyList(table: AclTable, indexes: IndexTable): QueryResult<LegacyAclOut[]> {
  const out = table
    .allTokens()
    .map(legacyAclOut)
    .filter((t): t is LegacyAclOut => t !== null)
    .sort((a, b) => byId(a.ID, b.ID));
  return queryResult(indexes, [ACL_TOKENS], out);
}

/** Whole token rows (secrets, Type, Rules, policy IDs) for the given AccessorIDs: what replication copies. */
export function aclTokenRows(table: AclTable, indexes: IndexTable, accessors: readonly string[]): QueryResult<ReplicatedToken[]> {
  const out: ReplicatedToken[] = [];
  for (const id of accessors) {
    const t = table.token(id);
    if (!t) continue;
    out.push({
      AccessorID: t.AccessorID,
      SecretID: t.SecretID,
      Description: t.Description,
      Policies: t.Policies.map((l) => ({ ID: l.ID })),
      Type: t.Type,
      Rules: t.Rules ?? '',
      CreateTime: t.CreateTime,
    });
  }
  return queryResult(indexes, [ACL_TOKENS], out);
}

export function aclPolicy(table: AclTable, indexes: IndexTable, id: string): QueryResult<PolicyOut | null> {
  const rec = table.policy(id);
  return queryResult(indexes, [ACL_POLICIES], rec ? policyOut(rec) : null);
}

/** Every policy without its rules, ordered by ID. */
export function aclPolicies(table: AclTable, indexes: IndexTable): QueryResult<PolicyListEntry[]> {
  const policies = table.allPolicies().sort((a, b) => byId(a.ID, b.ID));
  return queryResult(indexes, [ACL_POLICIES], policies.map(policyListEntry));
}

/**
 * The token resolver's view of the tables. `current` is called on every lookup because a snapshot
 * restore replaces the table object.
 */
export function aclLookup(current: () => AclTable): TokenLookup {
  return {
    tokenBySecret: (secret) => current().tokenBySecret(secret),
    policyById: (id) => current().policy(id),
  };
}
