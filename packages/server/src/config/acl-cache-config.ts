// How a client agent keeps the tokens it resolved through the servers (acl/cached-resolver.ts):
// `acl.token_ttl` (legacy top-level `acl_ttl`; Consul's default 30 s) and `acl.down_policy`, what
// to do when no server answers. As in Consul's config builder, the key under `acl` wins over the
// legacy one in the same file. Servers resolve from their own replicated store and use neither.
import { parseDurationMs } from '@registry/store';

export const DOWN_POLICIES = ['allow', 'deny', 'extend-cache', 'async-cache'] as const;
export type DownPolicy = (typeof DOWN_POLICIES)[number];

export const DEFAULT_TOKEN_TTL_MS = 30_000;

/** The AclConfig fields this file sets. */
interface AclCacheFields {
  downPolicy: DownPolicy;
  tokenTtlMs: number;
}

export function applyAclCacheConfig(acl: AclCacheFields, file: Record<string, unknown>, source: string): void {
  const section = (file.acl ?? {}) as Record<string, unknown>;
  const ttl = section.token_ttl ?? file.acl_ttl;
  if (ttl !== undefined) {
    const key = section.token_ttl !== undefined ? 'acl.token_ttl' : 'acl_ttl';
    const ms = typeof ttl === 'string' ? parseDurationMs(ttl) : undefined;
    if (ms === undefined || ms < 0) throw new Error(`${source}: ${key} must be a duration such as "30s"`);
    acl.tokenTtlMs = ms;
  }
  const down = section.down_policy;
  if (down !== undefined) {
    if (!(DOWN_POLICIES as readonly unknown[]).includes(down)) throw new Error(`${source}: acl.down_policy must be one of ${DOWN_POLICIES.map((p) => `"${p}"`).join(', ')}`);
    acl.downPolicy = down as DownPolicy;
  }
}
