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
import type { TxnCommand } from './catalog-txn/txn-command';
import type { QueryDeleteCommand, QuerySetCommand } from './queries/query-commands';
import type { AreaCreateCommand, AreaDeleteCommand, AreaServersCommand, AreaUpdateCommand } from './areas/area-commands';
import type { RequestStamp } from './requests/request-table';
import { decodeStamped } from './requests/stamped-entry';
import type { EventFireCommand } from './events/event-commands';
import type { AutopilotSetConfigCommand } from './autopilot/autopilot-commands';

export interface CoordinateUpdate {
  Node: string;
  Coord: Coordinate;
}

export type Command =
  | ({ type: 'session.create' } & SessionCreateCommand)
  | ({ type: 'session.destroy' } & SessionDestroyCommand)
  | ({ type: 'kv.apply' } & KvApplyCommand)
  | ({ type: 'kv.txn' } & KvTxnCommand)
  | ({ type: 'txn' } & TxnCommand)
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
  | ({ type: 'area.servers' } & AreaServersCommand)
  | ({ type: 'event.fire' } & EventFireCommand)
  | ({ type: 'autopilot.set-config' } & AutopilotSetConfigCommand)
  /**
   * Replace the whole state by a saved one (PUT /v1/snapshot). `staged` names (`sha256:<hex>`) a
   * state file of `bytes` bytes staged on every server before the entry was proposed, and decoded
   * there ahead of it (Store.prepareRestoreFrom): the entry carries no state, and every server
   * swaps in the state of those same bytes. The older form carries the bytes (`state`) in the entry,
   * and `prepared` names the state decoded from them ahead of it; it is still applied from logs
   * written before the staged form.
   */
  | { type: 'snapshot.restore'; staged: string; bytes: number }
  | { type: 'snapshot.restore'; state: Uint8Array; prepared?: string };

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
  return decodeEntry(b).cmd;
}

/**
 * What a Raft entry carries: a command and, for every write proposed through the RPC layer, the
 * request's identity, so that a copy committed twice is applied once (requests/request-table.ts).
 */
export interface Entry {
  cmd: Command;
  request?: RequestStamp;
}

/**
 * The stamped form on the wire: `[command, id, at]`, with a fourth element `1` on a re-sent copy.
 * An array, so that it cannot be mistaken for a bare command (always a map with `type`) and costs
 * no field names. Entries written by the first stamped version, `{c, r, t}` maps, still decode.
 */
type StampedEntry = [c: Command, r: string, t: number, resent?: 1];

/** The first stamped form, kept for logs written with it. */
interface StampedMap {
  c: Command;
  r: string;
  t: number;
}

export function encodeEntry(e: Entry): Uint8Array {
  if (!e.request) return packr.pack(e.cmd);
  return encodeStamped(e.cmd, e.request.id, e.request.at, e.request.resent === true);
}

/** encodeEntry() of a stamped command, without making the Entry and stamp objects first (every write). */
export function encodeStamped(cmd: Command, id: string, at: number, resent: boolean): Uint8Array {
  const stamped: StampedEntry = resent ? [cmd, id, at, 1] : [cmd, id, at];
  return packr.pack(stamped);
}

/** Decode a Raft entry: a stamped command or a bare one (entries written before stamps existed). */
export function decodeEntry(b: Uint8Array): Entry {
  // Every write's entry has this form: its stamp read from the end, msgpackr given only the command.
  const stamped = decodeStamped(b, (bytes) => packr.unpack(bytes) as unknown);
  if (stamped && isCommandShaped(stamped.cmd)) return stamped as Entry;
  let value: unknown;
  try {
    value = packr.unpack(b);
  } catch (err) {
    throw new Error(`not a state machine command: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof value !== 'object' || value === null) throw new Error('not a state machine command');
  if (Array.isArray(value)) {
    const [c, r, t, resent] = value as unknown[];
    if (typeof r !== 'string' || typeof t !== 'number' || !isCommandShaped(c)) throw new Error('not a state machine command');
    return { cmd: c as Command, request: resent === 1 ? { id: r, at: t, resent: true } : { id: r, at: t } };
  }
  const v = value as Partial<StampedMap> & { type?: unknown };
  if (typeof v.r === 'string' && typeof v.t === 'number' && typeof v.c === 'object' && v.c !== null) {
    if (!isCommandShaped(v.c)) throw new Error('not a state machine command');
    // Written before copies were marked: any of them may be a re-send.
    return { cmd: v.c, request: { id: v.r, at: v.t, resent: true } };
  }
  if (typeof v.type !== 'string') throw new Error('not a state machine command');
  return { cmd: value as Command };
}

function isCommandShaped(c: unknown): boolean {
  return typeof c === 'object' && c !== null && typeof (c as { type?: unknown }).type === 'string';
}
