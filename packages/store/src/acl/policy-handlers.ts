// acl.policy-* commands (Consul's ACL.PolicySet / PolicyDelete): name rules and uniqueness, rules
// that must parse, the global-management policy's protections, Consul's error texts.
import {
  GLOBAL_MANAGEMENT_POLICY_ID,
  parseRules,
  policyHash,
  policyNameError,
  RuleError,
} from '@registry/acl';
import { CommandError, Rejection } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { optObject, str, strList, type PlainObject } from '../input-fields';
import type { State } from '../state';
import type { AclCommand } from './commands';
import type { PolicyRecord } from './records';
import { policyOut } from './views';

type Cmd<T extends AclCommand['type']> = Extract<AclCommand, { type: T }>;

const isManagement = (id: string) => id.toLowerCase() === GLOBAL_MANAGEMENT_POLICY_ID;

export function policyRecord(fields: Omit<PolicyRecord, 'Hash' | 'CreateIndex' | 'ModifyIndex'>, createIndex: number, index: number): PolicyRecord {
  return { ...fields, Hash: policyHash(fields), CreateIndex: createIndex, ModifyIndex: index };
}

/** The policy as requested, validated on its own (no table lookups). */
function policyFields(input: PlainObject): Omit<PolicyRecord, 'Hash' | 'CreateIndex' | 'ModifyIndex'> {
  const fields = {
    ID: str(input, 'ID', 'policy'),
    Name: str(input, 'Name', 'policy'),
    Description: str(input, 'Description', 'policy'),
    Rules: str(input, 'Rules', 'policy'),
    Datacenters: strList(input, 'Datacenters', 'policy'),
  };
  if (fields.ID === '') throw new Rejection('a policy needs an ID');
  const nameProblem = policyNameError(fields.Name);
  if (nameProblem) throw new Rejection(nameProblem);
  try {
    parseRules(fields.Rules);
  } catch (err) {
    if (err instanceof RuleError) throw new Rejection(err.message);
    throw err;
  }
  return fields;
}

export const policyCreate: CommandHandler<Cmd<'acl.policy-create'>> = (state, cmd) => {
  const fields = policyFields(optObject(cmd.policy, 'policy') ?? {});
  if (state.acl.policy(fields.ID)) return new CommandError(`policy ID ${fields.ID} is already in use`);
  if (state.acl.policyByName(fields.Name)) return new CommandError(`Invalid Policy: A Policy with Name "${fields.Name}" already exists`);
  return (txn) => {
    const rec = policyRecord(fields, txn.index, txn.index);
    state.acl.putPolicy(rec, txn);
    return policyOut(rec);
  };
};

export const policyUpdate: CommandHandler<Cmd<'acl.policy-update'>> = (state, cmd) => {
  const fields = policyFields(optObject(cmd.policy, 'policy') ?? {});
  const existing = state.acl.policy(fields.ID);
  if (!existing) return new CommandError(`cannot find policy ${fields.ID}`);
  const holder = state.acl.policyByName(fields.Name);
  if (holder && holder.ID !== existing.ID) return new CommandError(`Invalid Policy: A policy with name "${fields.Name}" already exists`);
  if (isManagement(existing.ID)) {
    if (fields.Datacenters.length > 0) {
      return new CommandError('Changing the Datacenters of the builtin global-management policy is not permitted');
    }
    if (fields.Rules !== existing.Rules) return new CommandError('Changing the Rules for the builtin global-management policy is not permitted');
  }
  return (txn) => {
    const rec = policyRecord({ ...fields, ID: existing.ID }, existing.CreateIndex, txn.index);
    state.acl.putPolicy(rec, txn);
    return policyOut(rec);
  };
};

/** Unknown policies are not an error (true); tokens keep their links, which reads then leave out. */
export const policyDelete: CommandHandler<Cmd<'acl.policy-delete'>> = (state: State, cmd) => {
  const id = typeof cmd.id === 'string' ? cmd.id : '';
  if (isManagement(id)) return new CommandError('Delete operation not permitted on the builtin global-management policy');
  return (txn) => {
    state.acl.deletePolicy(id, txn);
    return true;
  };
};
