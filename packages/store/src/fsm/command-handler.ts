import type { CommandError } from '../command-error';
import type { State } from '../state';
import type { Txn } from '../txn';

/** The mutation of an accepted command; it must not fail, and returns the command's result. */
export type Commit = (txn: Txn) => unknown;

/**
 * One command type's logic (Consul's fsm/commands_oss.go shape), split so that refusing can never
 * leave partial state: the handler only reads `state` and validates (returning a CommandError or
 * throwing a Rejection), and only the Commit it returns writes.
 */
export type CommandHandler<C> = (state: State, cmd: C) => CommandError | Commit;
