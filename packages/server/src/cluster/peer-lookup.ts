// The operator raft calls (remove-peer, promote) name a server by its Raft ID or its address.
import type { RaftNode, ServerInfo } from '@registry/raft';
import { badRequest } from '../errors';

/** The configuration's server with this ID, or else with this address; 400 `Unknown peer` when none. */
export function peerOf(raft: RaftNode, by: { id?: string; address?: string }): ServerInfo {
  const server = raft.configuration().find((s) => (by.id ? s.id === by.id : s.address === by.address));
  if (!server) throw badRequest(`Unknown peer ${by.id ?? by.address}`);
  return server;
}
