// acl.legacy-* commands: Consul 1.4's ACL.Apply (the legacy API) after the endpoint's checks. A
// legacy token is a token of the 1.4 tables with a Type (client|management) and its own Rules, found
// by its SecretID (the legacy `ID`); the resolver turns its Type and Rules into an embedded policy.
import { parseLegacyRules, RuleError } from '@registry/acl';
import { CommandError } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { optObject, str } from '../input-fields';
import type { AclCommand } from './commands';
import { tokenRecord } from './token-handlers';

type Cmd<T extends AclCommand['type']> = Extract<AclCommand, { type: T }>;

/** Consul's aclApplyInternal + the state store's legacy ACLTokenSet. Answers the token's ID (its secret). */
export const legacySet: CommandHandler<Cmd<'acl.legacy-set'>> = (state, cmd) => {
  const input = optObject(cmd.acl, 'acl') ?? {};
  const secret = str(input, 'ID', 'acl');
  if (secret === '') return new CommandError('Missing ACL ID');
  const type = str(input, 'Type', 'acl');
  if (type !== 'client' && type !== 'management') return new CommandError('Invalid ACL Type');
  const existing = state.acl.tokenBySecret(secret);
  if (existing && (existing.Policies.length > 0 || existing.Type === '')) {
    return new CommandError('Cannot use legacy endpoint to modify a non-legacy token');
  }
  const rules = str(input, 'Rules', 'acl');
  try {
    parseLegacyRules(rules);
  } catch (err) {
    if (err instanceof RuleError) return new CommandError(`ACL rule compilation failed: ${err.message}`);
    throw err;
  }
  const accessor = existing ? existing.AccessorID : str(input, 'AccessorID', 'acl');
  if (!existing && (accessor === '' || state.acl.token(accessor))) return new CommandError('a new token needs an unused AccessorID');
  const fields = {
    AccessorID: accessor,
    SecretID: secret,
    Description: str(input, 'Name', 'acl'),
    Policies: [],
    Local: false,
    CreateTime: existing ? existing.CreateTime : str(input, 'CreateTime', 'acl'),
    Type: type,
    Rules: rules,
  };
  return (txn) => {
    state.acl.putToken(tokenRecord(fields, existing ? existing.CreateIndex : txn.index, txn.index), txn);
    return secret;
  };
};

/** Deletes whichever token has that secret (Consul's ACLTokenDeleteBySecret); unknown: true. */
export const legacyDelete: CommandHandler<Cmd<'acl.legacy-delete'>> = (state, cmd) => {
  const secret = typeof cmd.secretID === 'string' ? cmd.secretID : '';
  const existing = state.acl.tokenBySecret(secret);
  return (txn) => {
    if (existing) state.acl.deleteToken(existing.AccessorID, txn);
    return true;
  };
};
