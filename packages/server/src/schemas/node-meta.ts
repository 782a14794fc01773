// Node metadata as Consul bounds it (structs.ValidateMetadata; consul-behaviour §5.2's reasons):
// at most 64 pairs, keys of `[a-zA-Z0-9_-]`, up to 128 characters, values up to 512, and the
// `registry-` prefix kept for the registry's own keys. The one such key the registry writes on
// its servers' nodes, `registry-network-segment`, is accepted back, so a node read from the
// catalog can be registered again as it is.
//
// Checked at the HTTP edge (PUT /v1/catalog/register), not in the state machine: a log entry the
// state machine once accepted must replay the same way on every server, whatever its version.
import { metaProblem, RESERVED_META_PREFIX } from '@registry/store';

/** Reserved keys a client may send back because the registry itself sets them. */
const ALLOWED_RESERVED = new Set([`${RESERVED_META_PREFIX}network-segment`]);

/** Why `meta` is not acceptable as a node's metadata, or undefined (the store's rules for service meta). */
export function nodeMetaProblem(meta: Readonly<Record<string, unknown>> | null | undefined): string | undefined {
  return meta ? metaProblem(meta, ALLOWED_RESERVED) : undefined;
}
