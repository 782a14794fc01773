// acl.builtins and acl.bootstrap: what Consul's leader does in initializeACLs and what
// `PUT /v1/acl/bootstrap` commits. Both create the built-ins when missing, so a bootstrap token
// never links to a policy that does not exist yet.
import {
  ANONYMOUS_TOKEN_ACCESSOR_ID,
  ANONYMOUS_TOKEN_DESCRIPTION,
  ANONYMOUS_TOKEN_SECRET,
  GLOBAL_MANAGEMENT_POLICY_DESCRIPTION,
  GLOBAL_MANAGEMENT_POLICY_ID,
  GLOBAL_MANAGEMENT_POLICY_NAME,
  GLOBAL_MANAGEMENT_RULES,
} from '@registry/acl';
import { CommandError } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { bool, optObject, str } from '../input-fields';
import type { State } from '../state';
import type { Txn } from '../txn';
import type { AclCommand, BootstrapResult } from './commands';
import { policyRecord } from './policy-handlers';
import { tokenRecord } from './token-handlers';
import { tokenOut } from './views';

type Cmd<T extends AclCommand['type']> = Extract<AclCommand, { type: T }>;

/** Creates what is missing; a policy already holding the built-in's name blocks only the policy. */
function ensureBuiltins(state: State, createTime: string, txn: Txn): void {
  const acl = state.acl;
  if (!acl.policy(GLOBAL_MANAGEMENT_POLICY_ID) && !acl.policyByName(GLOBAL_MANAGEMENT_POLICY_NAME)) {
    const fields = {
      ID: GLOBAL_MANAGEMENT_POLICY_ID,
      Name: GLOBAL_MANAGEMENT_POLICY_NAME,
      Description: GLOBAL_MANAGEMENT_POLICY_DESCRIPTION,
      Rules: GLOBAL_MANAGEMENT_RULES,
      Datacenters: [],
    };
    acl.putPolicy(policyRecord(fields, txn.index, txn.index), txn);
  }
  if (!acl.token(ANONYMOUS_TOKEN_ACCESSOR_ID) && !acl.tokenBySecret(ANONYMOUS_TOKEN_SECRET)) {
    const fields = {
      AccessorID: ANONYMOUS_TOKEN_ACCESSOR_ID,
      SecretID: ANONYMOUS_TOKEN_SECRET,
      Description: ANONYMOUS_TOKEN_DESCRIPTION,
      Policies: [],
      Local: false,
      CreateTime: createTime,
      Type: '',
    };
    acl.putToken(tokenRecord(fields, txn.index, txn.index), txn);
  }
}

export const aclBuiltins: CommandHandler<Cmd<'acl.builtins'>> = (state, cmd) => {
  const createTime = typeof cmd.createTime === 'string' ? cmd.createTime : '';
  return (txn) => {
    ensureBuiltins(state, createTime, txn);
    return true;
  };
};

export const aclBootstrap: CommandHandler<Cmd<'acl.bootstrap'>> = (state, cmd) => {
  const input = optObject(cmd.token, 'token') ?? {};
  const orCreate = cmd.orCreate === true;
  const fields = {
    AccessorID: str(input, 'AccessorID', 'token'),
    SecretID: str(input, 'SecretID', 'token'),
    Description: str(input, 'Description', 'token'),
    CreateTime: str(input, 'CreateTime', 'token'),
    Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID }],
    Local: bool(input, 'Local', 'token'),
    Type: 'management',
  };
  if (fields.AccessorID === '' || fields.SecretID === '') return new CommandError('a new token needs an AccessorID and a SecretID');
  const holder = state.acl.tokenBySecret(fields.SecretID);
  if (orCreate && holder) return (): BootstrapResult => ({ token: tokenOut(state.acl, holder) });
  const used = state.acl.bootstrapIndex;
  if (used > 0 && !orCreate) return (): BootstrapResult => ({ resetIndex: used });
  if (holder || state.acl.token(fields.AccessorID)) return new CommandError('the new token\'s AccessorID or SecretID is already in use');
  return (txn): BootstrapResult => {
    ensureBuiltins(state, fields.CreateTime, txn);
    const rec = tokenRecord(fields, txn.index, txn.index);
    state.acl.putToken(rec, txn);
    if (used === 0) state.acl.markBootstrapped(txn);
    return { token: tokenOut(state.acl, rec) };
  };
};
