// session.create and session.destroy (Consul's Session.Apply and state.SessionCreate): the node and
// every named check must exist and no check may be critical. The TTL's range is the HTTP layer's
// (it knows the configured minimum); the state machine only requires it to parse.
import { CommandError } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { parseGoDuration } from '../go-duration';
import { optObject, str, strList } from '../input-fields';
import { destroySession } from './invalidation';
import type { SessionBehavior, SessionData } from './session-records';

export interface SessionCreateCommand {
  session: SessionData;
}

export interface SessionDestroyCommand {
  id: string;
}

export const sessionCreate: CommandHandler<SessionCreateCommand> = (state, cmd) => {
  const s = optObject(cmd.session, 'session') ?? {};
  const id = str(s, 'ID', 'session');
  if (id === '') return new CommandError('Must provide session ID');
  if (state.sessions.get(id)) return new CommandError(`Session ID ${id} already exists`);
  const node = str(s, 'Node', 'session');
  if (node === '') return new CommandError('Must provide Node');
  const behavior = str(s, 'Behavior', 'session') || 'release';
  if (behavior !== 'release' && behavior !== 'delete') return new CommandError(`Invalid Behavior setting '${behavior}'`);
  const lockDelay = s.LockDelay ?? 0;
  if (typeof lockDelay !== 'number' || !Number.isSafeInteger(lockDelay) || lockDelay < 0) {
    return new CommandError('Invalid field session.LockDelay: expected a non-negative integer of nanoseconds');
  }
  const ttl = str(s, 'TTL', 'session');
  if (ttl !== '') {
    const ns = parseGoDuration(ttl);
    if (ns === undefined || ns < 0) return new CommandError(`Session TTL '${ttl}' invalid`);
  }
  const checks = s.Checks === null ? null : strList(s, 'Checks', 'session');
  if (!state.catalog.node(node)) return new CommandError('Missing node registration');
  for (const c of checks ?? []) {
    const check = state.catalog.check(node, c);
    if (!check) return new CommandError(`Missing check '${c}' registration`);
    if (check.Status === 'critical') return new CommandError(`Check '${c}' is in critical state`);
  }
  const data: SessionData = {
    ID: id,
    Name: str(s, 'Name', 'session'),
    Node: state.catalog.node(node)?.Node ?? node,
    Checks: checks,
    LockDelay: lockDelay,
    Behavior: behavior as SessionBehavior,
    TTL: ttl,
  };
  return (txn) => state.sessions.put(data, txn).ID;
};

export const sessionDestroy: CommandHandler<SessionDestroyCommand> = (state, cmd) => {
  if (typeof cmd.id !== 'string' || cmd.id === '') return new CommandError('Missing session');
  return (txn) => {
    destroySession(state, cmd.id, txn);
    return true;
  };
};
