// Service metadata rules (Consul's ValidateMetadata with the reserved prefix renamed): bounded
// size, keys from a safe alphabet, and a prefix kept for the registry's own keys.

export const RESERVED_META_PREFIX = 'registry-';
const MAX_PAIRS = 64;
const MAX_KEY_LENGTH = 128;
const MAX_VALUE_LENGTH = 512;
const KEY_FORMAT = /^[a-zA-Z0-9_-]+$/;

/**
 * Why `meta` is not acceptable, or undefined. Keys are examined in sorted order so the verdict is
 * deterministic. `allowedReserved`: reserved keys a client may send back because the registry sets them.
 */
export function metaProblem(meta: Readonly<Record<string, unknown>>, allowedReserved: ReadonlySet<string> = new Set()): string | undefined {
  const keys = Object.keys(meta).sort();
  if (keys.length > MAX_PAIRS) return `Node metadata cannot contain more than ${MAX_PAIRS} key/value pairs`;
  for (const key of keys) {
    if (key === '') return 'Key cannot be blank';
    if (!KEY_FORMAT.test(key)) return 'Key contains invalid characters';
    if (key.length > MAX_KEY_LENGTH) return `Key is too long (limit: ${MAX_KEY_LENGTH} characters)`;
    if (key.startsWith(RESERVED_META_PREFIX) && !allowedReserved.has(key)) return `Key prefix '${RESERVED_META_PREFIX}' is reserved for internal use`;
    const value = meta[key];
    if (typeof value === 'string' && value.length > MAX_VALUE_LENGTH) return `Value is too long (limit: ${MAX_VALUE_LENGTH} characters)`;
  }
  return undefined;
}
