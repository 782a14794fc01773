// Cluster membership as data: how a Configuration is encoded inside a Config
// log entry, and how one single-server change produces the next configuration.
//
// Learners (etcd-io/raft's ConfChangeAddLearnerNode) are members that receive the log but are
// never part of a quorum. They are kept in the same server list, flagged, so that a Config entry
// written before learners existed decodes unchanged (every server a voter).
import type { Configuration, NodeId, ServerInfo } from './types';

export const EMPTY_CONFIGURATION: Configuration = Object.freeze({ servers: [] }) as Configuration;

/**
 * One single-server change (Raft thesis §4.1): `add` makes the server a voter (adding it, or
 * promoting a learner), `addLearner` makes it a learner (adding it, or demoting a voter), `remove`
 * takes it out. Each moves at most one voter in or out, so any two majorities of consecutive
 * configurations overlap; a learner moving in or out changes no majority at all.
 */
export type ConfChange = { type: 'add' | 'addLearner' | 'remove'; server: ServerInfo };

// JSON keeps a Config entry readable by any tool that dumps the log; config
// entries are rare, so the encoding's size does not matter.
export function encodeConfiguration(configuration: Configuration): Uint8Array {
  const servers = configuration.servers.map((s) => (s.learner ? { id: s.id, address: s.address, learner: true } : { id: s.id, address: s.address }));
  return new TextEncoder().encode(JSON.stringify({ servers }));
}

export function decodeConfiguration(data: Uint8Array): Configuration {
  const parsed: unknown = JSON.parse(new TextDecoder().decode(data));
  const servers = (parsed as { servers?: unknown }).servers;
  if (!Array.isArray(servers)) throw new Error('Config entry does not hold a configuration');
  return {
    servers: servers.map((s: { id?: unknown; address?: unknown; learner?: unknown }) => {
      if (typeof s.id !== 'string' || typeof s.address !== 'string') {
        throw new Error('Config entry holds a malformed server');
      }
      if (s.learner !== undefined && typeof s.learner !== 'boolean') throw new Error('Config entry holds a malformed learner flag');
      return s.learner === true ? { id: s.id, address: s.address, learner: true } : { id: s.id, address: s.address };
    }),
  };
}

/** A voting member (a learner is a member but not a voter). */
export function isVoter(configuration: Configuration, id: NodeId): boolean {
  return configuration.servers.some((s) => s.id === id && !s.learner);
}

export function voterIds(configuration: Configuration): NodeId[] {
  return configuration.servers.filter((s) => !s.learner).map((s) => s.id);
}

export function learnerIds(configuration: Configuration): NodeId[] {
  return configuration.servers.filter((s) => s.learner === true).map((s) => s.id);
}

/** Voters and learners: every server the leader replicates to. */
export function memberIds(configuration: Configuration): NodeId[] {
  return configuration.servers.map((s) => s.id);
}

/** Adding a known server updates its address (and role); removing an unknown one changes nothing. */
export function applyConfChange(configuration: Configuration, change: ConfChange): Configuration {
  const others = configuration.servers.filter((s) => s.id !== change.server.id);
  if (change.type === 'remove') return { servers: others };
  const index = configuration.servers.findIndex((s) => s.id === change.server.id);
  const added: ServerInfo = change.type === 'addLearner'
    ? { id: change.server.id, address: change.server.address, learner: true }
    : { id: change.server.id, address: change.server.address };
  if (index < 0) return { servers: [...configuration.servers, added] };
  const servers = configuration.servers.slice();
  servers[index] = added;
  return { servers };
}
