/** The 36-character identifiers used for tokens and policies. */
import { randomUUID } from 'node:crypto';
import { RESERVED_ID_PREFIX } from './builtins';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUUID(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/**
 * Why `value` is not a UUID, in the words Consul's lookups use (`UUID must be 36
 * characters`, `UUID improperly formatted`), or undefined when it is one.
 */
export function uuidError(value: string): string | undefined {
  if (value.length !== 36) return 'UUID must be 36 characters';
  if (!isUUID(value)) return 'UUID improperly formatted';
  return undefined;
}

export function isReservedID(id: string): boolean {
  return id.startsWith(RESERVED_ID_PREFIX);
}

/** A random UUID outside the reserved built-in range. */
export function generateUUID(): string {
  // A version-4 UUID has "4" in its third group so it cannot start with the reserved
  // prefix today; the loop keeps that true whatever generator sits here.
  for (;;) {
    const id = randomUUID();
    if (!isReservedID(id)) return id;
  }
}
