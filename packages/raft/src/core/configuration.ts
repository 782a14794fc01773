// Cluster membership as data: how a Configuration is encoded inside a Config
// log entry, and how one single-server change produces the next configuration.
import type { Configuration, NodeId, ServerInfo } from './types';

export const EMPTY_CONFIGURATION: Configuration = Object.freeze({ servers: [] }) as Configuration;

export type ConfChange = { type: 'add' | 'remove'; server: ServerInfo };

// JSON keeps a Config entry readable by any tool that dumps the log; config
// entries are rare, so the encoding's size does not matter.
export function encodeConfiguration(configuration: Configuration): Uint8Array {
  const servers = configuration.servers.map((s) => ({ id: s.id, address: s.address }));
  return new TextEncoder().encode(JSON.stringify({ servers }));
}

export function decodeConfiguration(data: Uint8Array): Configuration {
  const parsed: unknown = JSON.parse(new TextDecoder().decode(data));
  const servers = (parsed as { servers?: unknown }).servers;
  if (!Array.isArray(servers)) throw new Error('Config entry does not hold a configuration');
  return {
    servers: servers.map((s: { id?: unknown; address?: unknown }) => {
      if (typeof s.id !== 'string' || typeof s.address !== 'string') {
        throw new Error('Config entry holds a malformed server');
      }
      return { id: s.id, address: s.address };
    }),
  };
}

export function isVoter(configuration: Configuration, id: NodeId): boolean {
  return configuration.servers.some((s) => s.id === id);
}

export function voterIds(configuration: Configuration): NodeId[] {
  return configuration.servers.map((s) => s.id);
}

/** Adding a known server updates its address; removing an unknown one changes nothing. */
export function applyConfChange(configuration: Configuration, change: ConfChange): Configuration {
  const others = configuration.servers.filter((s) => s.id !== change.server.id);
  if (change.type === 'remove') return { servers: others };
  const index = configuration.servers.findIndex((s) => s.id === change.server.id);
  const added = { id: change.server.id, address: change.server.address };
  if (index < 0) return { servers: [...configuration.servers, added] };
  const servers = configuration.servers.slice();
  servers[index] = added;
  return { servers };
}
