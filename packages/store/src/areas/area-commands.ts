// area.create, area.update, area.delete and area.servers: the checks that need the state (one area
// per peer datacenter, never the local one) and the writes. Shapes are checked here too: the state
// machine must not trust a log entry.
import { CommandError, Rejection } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { bool, optObject, str, strList, type PlainObject } from '../input-fields';
import type { AreaInput, AreaServer } from './area-records';

export interface AreaCreateCommand {
  area: AreaInput;
}

export interface AreaUpdateCommand {
  id: string;
  UseTLS: boolean;
}

export interface AreaDeleteCommand {
  id: string;
}

/** Learned peer servers to add or refresh, and server IDs to forget. */
export interface AreaServersCommand {
  id: string;
  upsert: AreaServer[];
  remove?: string[];
}

/** What area.update answers: the ID, or `{ notFound }` for an unknown area. */
export type AreaUpdateResult = { ID: string } | { notFound: string };

export const areaCreate: CommandHandler<AreaCreateCommand> = (state, cmd) => {
  const a = optObject(cmd.area, 'area');
  if (!a) return new CommandError('Invalid field area: expected an object');
  const id = str(a, 'ID', 'area');
  if (id === '') return new CommandError('Missing area ID');
  const peer = str(a, 'PeerDatacenter', 'area');
  if (peer === '') return new CommandError('Must provide a PeerDatacenter');
  if (peer.toLowerCase() === state.datacenter.toLowerCase()) {
    return new CommandError(`Cannot create an area with the local datacenter "${state.datacenter}"`);
  }
  if (state.areas.get(id)) return new CommandError(`Area ID ${id} already exists`);
  const existing = state.areas.byPeer(peer);
  if (existing) return new CommandError(`An area for peer datacenter "${peer}" already exists (ID ${existing.ID})`);
  const retry = a.RetryJoin === null || a.RetryJoin === undefined ? null : strList(a, 'RetryJoin', 'area');
  const input: AreaInput = { ID: id, PeerDatacenter: peer, RetryJoin: retry, UseTLS: bool(a, 'UseTLS', 'area') };
  return (txn) => ({ ID: state.areas.put(input, txn).ID });
};

export const areaUpdate: CommandHandler<AreaUpdateCommand> = (state, cmd) => {
  if (typeof cmd.id !== 'string' || cmd.id === '') return new CommandError('Missing area ID');
  const useTls = bool(cmd as unknown as PlainObject, 'UseTLS', '');
  const existing = state.areas.get(cmd.id);
  if (!existing) return (): AreaUpdateResult => ({ notFound: cmd.id });
  return (txn): AreaUpdateResult => {
    if (existing.UseTLS === useTls) return { ID: existing.ID };
    return { ID: state.areas.put({ ...existing, UseTLS: useTls }, txn).ID };
  };
};

export const areaDelete: CommandHandler<AreaDeleteCommand> = (state, cmd) => {
  if (typeof cmd.id !== 'string' || cmd.id === '') return new CommandError('Missing area ID');
  return (txn) => state.areas.delete(cmd.id, txn);
};

function server(raw: unknown, path: string): AreaServer {
  const o = optObject(raw, path) ?? {};
  const s: AreaServer = {
    ID: str(o, 'ID', path),
    Node: str(o, 'Node', path),
    Address: str(o, 'Address', path),
    Datacenter: str(o, 'Datacenter', path),
    Build: str(o, 'Build', path),
  };
  if (s.ID === '' || s.Address === '') throw new Rejection(`Invalid field ${path}: ID and Address are required`);
  return s;
}

/** Answers false (and changes nothing) when the area is gone: a join may race a delete. */
export const areaServers: CommandHandler<AreaServersCommand> = (state, cmd) => {
  if (typeof cmd.id !== 'string' || cmd.id === '') return new CommandError('Missing area ID');
  if (!Array.isArray(cmd.upsert)) return new CommandError('Invalid field upsert: expected an array');
  const upsert = cmd.upsert.map((s, i) => server(s, `upsert[${i}]`));
  const remove = strList(cmd as unknown as PlainObject, 'remove', '');
  const area = state.areas.get(cmd.id);
  if (!area) return () => false;
  const foreign = upsert.find((s) => s.Datacenter.toLowerCase() !== area.PeerDatacenter.toLowerCase());
  if (foreign) return new CommandError(`Server ${foreign.ID} is in datacenter "${foreign.Datacenter}", not the area's peer "${area.PeerDatacenter}"`);
  return (txn) => {
    state.areas.changeServers(area.ID, upsert, remove, txn);
    return true;
  };
};
