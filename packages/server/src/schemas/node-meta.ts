// Node metadata as Consul bounds it (structs.ValidateMetadata; consul-behaviour §5.2's reasons):
// at most 64 pairs, keys of `[a-zA-Z0-9_-]`, up to 128 characters, values up to 512, and the
// `registry-` prefix kept for the registry's own keys. The one such key the registry writes on
// its servers' nodes, `registry-network-segment`, is accepted back, so a node read from the
// catalog can be registered again as it is.
//
// Checked at the HTTP edge (PUT /v1/catalog/register), not in the state machine: a log entry the
// state machine once accepted must replay the same way on every server, whatever its version.
import { metaProblem, RESERVED_META_PREFIX } from '@registry/store';

/** The reserved key the registry sets on its servers' nodes. */
export const SEGMENT_KEY = `${RESERVED_META_PREFIX}network-segment`;
/** Reserved keys a client may send back because the registry itself sets them. */
const ALLOWED_RESERVED = new Set([SEGMENT_KEY]);

/** Consul's name of SEGMENT_KEY, an alias of it with `http_config.consul_compat` (issue 15). */
export const CONSUL_SEGMENT_KEY = 'consul-network-segment';

/** Node meta with `consul-network-segment` renamed to registry's key (which wins when both are sent). */
export function aliasConsulNodeMeta<M extends Record<string, string>>(meta: M | null | undefined): M | null | undefined {
  if (!meta || !Object.prototype.hasOwnProperty.call(meta, CONSUL_SEGMENT_KEY)) return meta;
  const { [CONSUL_SEGMENT_KEY]: value, ...rest } = meta;
  return { [SEGMENT_KEY]: value, ...rest } as unknown as M;
}

/** Why `meta` is not acceptable as a node's metadata, or undefined (the store's rules for service meta). */
export function nodeMetaProblem(meta: Readonly<Record<string, unknown>> | null | undefined): string | undefined {
  return meta ? metaProblem(meta, ALLOWED_RESERVED) : undefined;
}
