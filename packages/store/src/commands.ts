// The commands the state machine applies, one discriminated union, msgpack-encoded in Raft entries.
// Later tables add their members here (session.*, kv.*, acl.*, query.*, intention.*, ca.*, area.*).
import { Packr } from 'msgpackr';
import type { DeregisterRequest, RegisterRequest } from './catalog/requests';
import type { Coordinate } from './coordinates/vivaldi';
import type { AclCommand } from './acl/commands';
import type { IntentionDeleteCommand, IntentionUpsertCommand } from './intentions/intention-commands';
import type { CaInitializeCommand, CaPruneCommand, CaRotateCommand, CaSerialsCommand, CaSetConfigCommand } from './ca/ca-commands';

import type { SessionCreateCommand, SessionDestroyCommand } from './sessions/session-commands';
import type { KvApplyCommand, KvTxnCommand } from './kv/kv-commands';
import type { QueryDeleteCommand, QuerySetCommand } from './queries/query-commands';
import type { AreaCreateCommand, AreaDeleteCommand, AreaServersCommand, AreaUpdateCommand } from './areas/area-commands';

export interface CoordinateUpdate {
  Node: string;
  Coord: Coordinate;
}

export type Command =
  | ({ type: 'session.create' } & SessionCreateCommand)
  | ({ type: 'session.destroy' } & SessionDestroyCommand)
  | ({ type: 'kv.apply' } & KvApplyCommand)
  | ({ type: 'kv.txn' } & KvTxnCommand)
  | ({ type: 'query.set' } & QuerySetCommand)
  | ({ type: 'query.delete' } & QueryDeleteCommand)
  | { type: 'catalog.register'; req: RegisterRequest }
  | { type: 'catalog.deregister'; req: DeregisterRequest }
  | { type: 'coordinate.update'; updates: CoordinateUpdate[] }
  | AclCommand
  | ({ type: 'intention.upsert' } & IntentionUpsertCommand)
  | ({ type: 'intention.delete' } & IntentionDeleteCommand)
  | ({ type: 'ca.initialize' } & CaInitializeCommand)
  | ({ type: 'ca.rotate' } & CaRotateCommand)
  | ({ type: 'ca.set-config' } & CaSetConfigCommand)
  | ({ type: 'ca.serials' } & CaSerialsCommand)
  | ({ type: 'ca.prune' } & CaPruneCommand)
  | ({ type: 'area.create' } & AreaCreateCommand)
  | ({ type: 'area.update' } & AreaUpdateCommand)
  | ({ type: 'area.delete' } & AreaDeleteCommand)
  | ({ type: 'area.servers' } & AreaServersCommand);

export type CommandType = Command['type'];

const packr = new Packr({ useRecords: false });

export function encodeCommand(c: Command): Uint8Array {
  return packr.pack(c);
}

/**
 * Decode a Raft entry. Throws on bytes that are not a `{type: string, ...}` record; the fields are
 * checked by `Store.apply`, which turns bad ones into a CommandError.
 */
export function decodeCommand(b: Uint8Array): Command {
  let value: unknown;
  try {
    value = packr.unpack(b);
  } catch (err) {
    throw new Error(`not a state machine command: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string') {
    throw new Error('not a state machine command');
  }
  return value as Command;
}
