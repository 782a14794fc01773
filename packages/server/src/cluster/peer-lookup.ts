// The operator raft calls (remove-peer, promote) name a server by its Raft ID or its address.
import type { RaftNode, ServerInfo } from '@registry/raft';
import { badRequest } from '../errors';

/**
 * The configuration's server with this ID, or else with this address. None: a 400 in Consul 1.4's
 * words (`address "…" was not found in the Raft configuration`), which clients match on (issue #29).
 */
export function peerOf(raft: RaftNode, by: { id?: string; address?: string }): ServerInfo {
  const server = raft.configuration().find((s) => (by.id ? s.id === by.id : s.address === by.address));
  if (!server) throw badRequest(by.id ? `id ${JSON.stringify(by.id)} was not found in the Raft configuration` : `address ${JSON.stringify(by.address ?? '')} was not found in the Raft configuration`);
  return server;
}
