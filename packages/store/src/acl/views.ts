// Stored ACL rows → what reads return. Policy link names are filled in from the current policies,
// so renames show up and links to deleted policies disappear (Consul's fixupTokenPolicyLinks).
import type { AclTable } from './acl-table';
import type { LegacyAclOut, PolicyLink, PolicyListEntry, PolicyOut, PolicyRecord, TokenListEntry, TokenOut, TokenRecord } from './records';

function links(table: AclTable, rec: TokenRecord): PolicyLink[] | null {
  if (rec.Policies.length === 0) return null;
  const out: PolicyLink[] = [];
  for (const link of rec.Policies) {
    const p = table.policy(link.ID);
    if (p) out.push({ ID: p.ID, Name: p.Name });
  }
  return out;
}

export function tokenOut(table: AclTable, rec: TokenRecord): TokenOut {
  return {
    AccessorID: rec.AccessorID,
    SecretID: rec.SecretID,
    Description: rec.Description,
    Policies: links(table, rec),
    ...(rec.Rules ? { Rules: rec.Rules } : {}),
    Local: rec.Local,
    CreateTime: rec.CreateTime,
    Hash: rec.Hash,
    CreateIndex: rec.CreateIndex,
    ModifyIndex: rec.ModifyIndex,
  };
}

export function tokenListEntry(table: AclTable, rec: TokenRecord): TokenListEntry {
  const { SecretID: _secret, Rules: _rules, ...entry } = tokenOut(table, rec);
  return rec.Rules ? { ...entry, Legacy: true } : entry;
}

/** The legacy view (Consul's ACLToken.Convert); null for tokens without a Type (1.4 tokens). */
export function legacyAclOut(rec: TokenRecord): LegacyAclOut | null {
  if (rec.Type === '') return null;
  return { ID: rec.SecretID, Name: rec.Description, Type: rec.Type, Rules: rec.Rules ?? '', CreateIndex: rec.CreateIndex, ModifyIndex: rec.ModifyIndex };
}

export function policyOut(rec: PolicyRecord): PolicyOut {
  return {
    ID: rec.ID,
    Name: rec.Name,
    Description: rec.Description,
    Rules: rec.Rules,
    ...(rec.Datacenters.length > 0 ? { Datacenters: [...rec.Datacenters] } : {}),
    Hash: rec.Hash,
    CreateIndex: rec.CreateIndex,
    ModifyIndex: rec.ModifyIndex,
  };
}

export function policyListEntry(rec: PolicyRecord): PolicyListEntry {
  return {
    ID: rec.ID,
    Name: rec.Name,
    Description: rec.Description,
    Datacenters: rec.Datacenters.length > 0 ? [...rec.Datacenters] : null,
    Hash: rec.Hash,
    CreateIndex: rec.CreateIndex,
    ModifyIndex: rec.ModifyIndex,
  };
}
