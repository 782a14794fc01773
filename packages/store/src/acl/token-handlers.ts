// acl.token-* commands (Consul's ACL.TokenSet / TokenClone / TokenDelete after the endpoint's
// checks): policy links resolved by ID or Name, 1.4's immutability rules, Consul's error texts.
import { ANONYMOUS_TOKEN_ACCESSOR_ID, tokenHash } from '@registry/acl';
import { CommandError, Rejection } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { bool, optList, optObject, str, type PlainObject } from '../input-fields';
import type { State } from '../state';
import type { AclTable } from './acl-table';
import type { AclCommand } from './commands';
import type { StoredPolicyLink, TokenRecord } from './records';
import { tokenOut } from './views';

type Cmd<T extends AclCommand['type']> = Extract<AclCommand, { type: T }>;

/** Links as given (ID and/or Name) → stored links by ID, in order, without duplicates. */
export function resolveLinks(table: AclTable, input: PlainObject): StoredPolicyLink[] {
  const out: StoredPolicyLink[] = [];
  const seen = new Set<string>();
  for (const [i, raw] of (optList(input, 'Policies', '') ?? []).entries()) {
    const link = optObject(raw, `Policies[${i}]`) ?? {};
    const id = str(link, 'ID', `Policies[${i}]`);
    const name = str(link, 'Name', `Policies[${i}]`);
    const policy = id !== '' ? table.policy(id) : table.policyByName(name);
    if (!policy) {
      throw new Rejection(id !== '' ? `No such policy with ID: ${id}` : `No such ACL policy with name "${name}"`);
    }
    if (seen.has(policy.ID)) continue;
    seen.add(policy.ID);
    out.push({ ID: policy.ID });
  }
  return out;
}

/** A token row with its Hash, stamped with the command's index. */
export function tokenRecord(
  fields: Omit<TokenRecord, 'Hash' | 'CreateIndex' | 'ModifyIndex'>,
  createIndex: number,
  index: number,
): TokenRecord {
  const Hash = tokenHash({
    Description: fields.Description,
    Type: fields.Type,
    Rules: fields.Rules ?? '',
    Local: fields.Local,
    PolicyIDs: fields.Policies.map((p) => p.ID),
  });
  return { ...fields, Hash, CreateIndex: createIndex, ModifyIndex: index };
}

function identity(o: PlainObject): { AccessorID: string; SecretID: string; CreateTime: string } {
  const AccessorID = str(o, 'AccessorID', 'token');
  const SecretID = str(o, 'SecretID', 'token');
  const CreateTime = str(o, 'CreateTime', 'token');
  if (AccessorID === '' || SecretID === '') throw new Rejection('a new token needs an AccessorID and a SecretID');
  return { AccessorID, SecretID, CreateTime };
}

function checkUnused(state: State, id: { AccessorID: string; SecretID: string }): void {
  if (state.acl.token(id.AccessorID)) throw new Rejection(`AccessorID ${id.AccessorID} is already in use`);
  if (state.acl.tokenBySecret(id.SecretID)) throw new Rejection('SecretID is already in use');
}

export const tokenCreate: CommandHandler<Cmd<'acl.token-create'>> = (state, cmd) => {
  const input = optObject(cmd.token, 'token') ?? {};
  const id = identity(input);
  checkUnused(state, id);
  const fields = {
    ...id,
    Description: str(input, 'Description', 'token'),
    Policies: resolveLinks(state.acl, input),
    Local: bool(input, 'Local', 'token'),
    Type: '',
  };
  return (txn) => {
    const rec = tokenRecord(fields, txn.index, txn.index);
    state.acl.putToken(rec, txn);
    return tokenOut(state.acl, rec);
  };
};

export const tokenUpdate: CommandHandler<Cmd<'acl.token-update'>> = (state, cmd) => {
  const input = optObject(cmd.token, 'token') ?? {};
  const accessor = str(input, 'AccessorID', 'token');
  const existing = state.acl.token(accessor);
  if (!existing) return new CommandError(`Cannot find token "${accessor}"`);
  const secret = str(input, 'SecretID', 'token');
  if (secret !== '' && secret !== existing.SecretID) return new CommandError('Changing a tokens SecretID is not permitted');
  const local = bool(input, 'Local', 'token');
  if (local !== existing.Local) return new CommandError(`cannot toggle local mode of ${existing.AccessorID}`);
  const fields = {
    AccessorID: existing.AccessorID,
    SecretID: existing.SecretID,
    CreateTime: existing.CreateTime,
    // A full replacement, as Consul's TokenSet: an update through the 1.4 API drops the legacy Type
    // and Rules, which upgrades a legacy token into a 1.4 one.
    Type: '',
    Description: str(input, 'Description', 'token'),
    Policies: resolveLinks(state.acl, input),
    Local: local,
  };
  return (txn) => {
    const rec = tokenRecord(fields, existing.CreateIndex, txn.index);
    state.acl.putToken(rec, txn);
    return tokenOut(state.acl, rec);
  };
};

/** Answers null when the source token does not exist (the route's 403 `ACL not found`). */
export const tokenClone: CommandHandler<Cmd<'acl.token-clone'>> = (state, cmd) => {
  const from = typeof cmd.from === 'string' ? state.acl.token(cmd.from) : undefined;
  if (!from) return () => null;
  if (from.Rules) return new CommandError('Cannot clone a legacy ACL with this endpoint');
  const input = optObject(cmd.token, 'token') ?? {};
  const id = identity(input);
  checkUnused(state, id);
  const description = str(input, 'Description', 'token');
  const fields = {
    ...id,
    Description: description !== '' ? description : from.Description,
    Policies: from.Policies,
    Local: from.Local,
    Type: '',
  };
  return (txn) => {
    const rec = tokenRecord(fields, txn.index, txn.index);
    state.acl.putToken(rec, txn);
    return tokenOut(state.acl, rec);
  };
};

/** Unknown tokens are not an error (true, as Consul); the anonymous token cannot go. */
export const tokenDelete: CommandHandler<Cmd<'acl.token-delete'>> = (state, cmd) => {
  const accessor = typeof cmd.accessorID === 'string' ? cmd.accessorID : '';
  if (accessor.toLowerCase() === ANONYMOUS_TOKEN_ACCESSOR_ID) {
    return new CommandError('Delete operation not permitted on the anonymous token');
  }
  return (txn) => {
    state.acl.deleteToken(accessor, txn);
    return true;
  };
};
