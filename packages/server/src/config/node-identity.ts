// `node_id` and `node_meta` (Consul's agent keys): a fixed node ID instead of the one generated and
// kept in <data-dir>/node-id, and metadata put on this agent's own catalog node. Both are checked
// when the file is read, so a bad value stops the agent at start with the file named.
import { nodeMetaProblem } from '../schemas/node-meta';
import { isUUID } from '@registry/acl';

export interface NodeIdentityConfig {
  /** `node_id`, lower-cased as Consul stores it; undefined → generated once and kept in the data dir. */
  nodeId?: string;
  /** `node_meta`: merged over earlier files, key by key. */
  nodeMeta: Record<string, string>;
}

export function applyNodeIdentity(out: NodeIdentityConfig, file: Record<string, unknown>, source: string): void {
  if (file.node_id !== undefined) {
    const id = file.node_id;
    if (typeof id !== 'string' || !isUUID(id)) {
      throw new Error(`${source}: node_id must be a UUID (8-4-4-4-12 hex digits), got ${JSON.stringify(id)}`);
    }
    out.nodeId = id.toLowerCase();
  }
  if (file.node_meta !== undefined) {
    const meta = file.node_meta;
    if (!meta || typeof meta !== 'object' || Array.isArray(meta)) throw new Error(`${source}: node_meta must be an object of strings`);
    const merged = { ...out.nodeMeta };
    for (const [k, v] of Object.entries(meta)) {
      if (typeof v !== 'string') throw new Error(`${source}: node_meta.${k} must be a string`);
      merged[k] = v;
    }
    const problem = nodeMetaProblem(merged);
    if (problem) throw new Error(`${source}: invalid node_meta: ${problem}`);
    out.nodeMeta = merged;
  }
}
