// query.set (create or update) and query.delete: the checks that need the state (Consul's
// state.PreparedQuerySet). Everything that does not — field shapes, template compilation — is
// checked by the HTTP layer before the command is proposed.
import { CommandError } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { optObject, str } from '../input-fields';
import { isTemplate, type QueryDefinition } from './query-records';

export interface QuerySetCommand {
  op: 'create' | 'update';
  query: QueryDefinition;
}

export interface QueryDeleteCommand {
  id: string;
}

/** What query.set answers: the ID, or `{ notFound }` for an update of an unknown ID. */
export type QuerySetResult = { ID: string } | { notFound: string };

export const querySet: CommandHandler<QuerySetCommand> = (state, cmd) => {
  if (cmd.op !== 'create' && cmd.op !== 'update') return new CommandError('Invalid field op: expected create or update');
  const q = optObject(cmd.query, 'query');
  if (!q) return new CommandError('Invalid field query: expected an object');
  const id = str(q, 'ID', 'query');
  if (id === '') return new CommandError('Missing query ID');
  const name = str(q, 'Name', 'query');
  const session = str(q, 'Session', 'query');
  const template = optObject(q.Template, 'query.Template');
  const service = optObject(q.Service, 'query.Service');
  if (!template || !service) return new CommandError('Invalid field query: Template and Service are required');
  const existing = state.queries.get(id);
  if (cmd.op === 'create' && existing) return new CommandError(`Prepared query ID ${id} already exists`);
  if (cmd.op === 'update' && !existing) return () => ({ notFound: id }) satisfies QuerySetResult;
  const def = q as unknown as QueryDefinition;
  if (name !== '' || isTemplate(def)) {
    const other = state.queries.named(name);
    if (other && other.ID.toLowerCase() !== id.toLowerCase()) {
      if (name === '') return new CommandError('a query template with an empty name already exists');
      return new CommandError(`name '${name}' aliases an existing query name`);
    }
  }
  if (name !== '') {
    const byId = state.queries.get(name);
    if (byId && byId.ID.toLowerCase() !== id.toLowerCase()) return new CommandError(`name '${name}' aliases an existing query ID`);
  }
  if (session !== '' && !state.sessions.get(session)) return new CommandError(`invalid session ${JSON.stringify(session)}`);
  return (txn): QuerySetResult => ({ ID: state.queries.put(def, txn).ID });
};

export const queryDelete: CommandHandler<QueryDeleteCommand> = (state, cmd) => {
  if (typeof cmd.id !== 'string' || cmd.id === '') return new CommandError('Missing query ID');
  return (txn) => state.queries.delete(cmd.id, txn);
};
