// acl.replicate: what a secondary datacenter's leader commits after comparing its tables with the
// primary's (server/src/acl/acl-replication.ts). Rows are taken as the primary has them (no name or
// link checks: the primary made them valid, and a link to a policy not replicated yet must stay) and
// get this datacenter's indexes; Local tokens are never touched, and global tokens only when asked.
import type { CommandHandler } from '../fsm/command-handler';
import type { State } from '../state';
import type { Txn } from '../txn';
import type { AclCommand, ReplicatedPolicy, ReplicatedToken } from './commands';
import { policyRecord } from './policy-handlers';
import { tokenRecord } from './token-handlers';

type Cmd<T extends AclCommand['type']> = Extract<AclCommand, { type: T }>;

function putPolicy(state: State, p: ReplicatedPolicy, txn: Txn): void {
  const existing = state.acl.policy(p.ID);
  // A local policy holding the name (one made before this datacenter became a secondary) gives way.
  const sameName = state.acl.policyByName(p.Name);
  if (sameName && sameName.ID.toLowerCase() !== p.ID.toLowerCase()) state.acl.deletePolicy(sameName.ID, txn);
  const fields = { ID: p.ID, Name: p.Name, Description: p.Description ?? '', Rules: p.Rules ?? '', Datacenters: [...(p.Datacenters ?? [])] };
  state.acl.putPolicy(policyRecord(fields, existing ? existing.CreateIndex : txn.index, txn.index), txn);
}

function putToken(state: State, t: ReplicatedToken, txn: Txn): void {
  const existing = state.acl.token(t.AccessorID);
  // A local token that happens to hold the secret gives way to the global one.
  const sameSecret = state.acl.tokenBySecret(t.SecretID);
  if (sameSecret && sameSecret.AccessorID.toLowerCase() !== t.AccessorID.toLowerCase()) state.acl.deleteToken(sameSecret.AccessorID, txn);
  const fields = {
    AccessorID: t.AccessorID,
    SecretID: t.SecretID,
    Description: t.Description ?? '',
    Policies: (t.Policies ?? []).map((l) => ({ ID: l.ID })),
    Local: false,
    CreateTime: t.CreateTime ?? '',
    Type: t.Type ?? '',
    Rules: t.Rules ?? '',
  };
  state.acl.putToken(tokenRecord(fields, existing ? existing.CreateIndex : txn.index, txn.index), txn);
}

export const aclReplicate: CommandHandler<Cmd<'acl.replicate'>> = (state, cmd) => (txn) => {
  for (const id of cmd.policies?.delete ?? []) state.acl.deletePolicy(id, txn);
  for (const p of cmd.policies?.upsert ?? []) putPolicy(state, p, txn);
  for (const id of cmd.tokens?.delete ?? []) {
    const t = state.acl.token(id);
    if (t && !t.Local) state.acl.deleteToken(id, txn);
  }
  for (const t of cmd.tokens?.upsert ?? []) putToken(state, t, txn);
  return true;
};
