// intention.upsert / intention.delete: the FSM side of intention writes. IDs and timestamps come in
// the command (made by the server that accepted the request), so every server applies the same row.
import { CommandError } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { intentionPrecedence } from './precedence';
import { describeIntention, type IntentionInput, type IntentionRecord } from './records';
import { intentionProblems, normaliseIntention, problemsMessage } from './validation';

const CONSUL_SOURCE_TYPES = ['consul'];

export interface IntentionUpsertCommand {
  /** create: ID must be new; update: ID must exist (CreatedAt and CreateIndex are kept). */
  op: 'create' | 'update';
  intention: IntentionInput & { ID: string };
  /** RFC 3339 time of the request, stamped as UpdatedAt (and CreatedAt on create). */
  now: string;
  /**
   * SourceType `consul` is accepted and kept as sent (the HTTP edge sets this in consul_compat
   * mode). A flag in the command, so entries written without it replay exactly as before.
   */
  consulSourceType?: boolean;
}

export interface IntentionDeleteCommand {
  id: string;
}

export const intentionUpsert: CommandHandler<IntentionUpsertCommand> = (state, cmd) => {
  const input = cmd.intention;
  if (typeof input !== 'object' || input === null || typeof input.ID !== 'string' || input.ID === '') {
    return new CommandError('Invalid field intention.ID: expected a non-empty string');
  }
  if (typeof cmd.now !== 'string') return new CommandError('Invalid field now: expected a timestamp');
  if (cmd.op !== 'create' && cmd.op !== 'update') return new CommandError('Invalid field op: expected create or update');
  const existing = state.intentions.get(input.ID);
  if (cmd.op === 'create' && existing) return new CommandError(`Intention ${input.ID} already exists`);
  if (cmd.op === 'update' && !existing) return new CommandError(`Cannot modify non-existent intention: '${input.ID}'`);
  let n;
  try {
    n = normaliseIntention(input);
  } catch {
    return new CommandError('Invalid intention');
  }
  const problems = intentionProblems(n, cmd.consulSourceType === true ? CONSUL_SOURCE_TYPES : []);
  if (problems.length > 0) return new CommandError(problemsMessage(problems));
  const precedence = intentionPrecedence(n);
  const duplicate = state.intentions.duplicateOf(n, input.ID);
  if (duplicate) return new CommandError(`duplicate intention found: ${describeIntention(duplicate)}`);
  return (txn) => {
    const row: IntentionRecord = {
      ID: input.ID,
      ...n,
      Action: n.Action as 'allow' | 'deny',
      Precedence: precedence,
      CreatedAt: existing?.CreatedAt ?? cmd.now,
      UpdatedAt: cmd.now,
      CreateIndex: existing?.CreateIndex ?? txn.index,
      ModifyIndex: txn.index,
    };
    state.intentions.set(row, txn);
    return input.ID;
  };
};

export const intentionDelete: CommandHandler<IntentionDeleteCommand> = (state, cmd) => {
  if (typeof cmd.id !== 'string') return new CommandError('Invalid field id: expected a string');
  if (!state.intentions.get(cmd.id)) return new CommandError(`Cannot modify non-existent intention: '${cmd.id}'`);
  return (txn) => state.intentions.delete(cmd.id, txn);
};
