// Node IDs are 36-character UUID strings (8-4-4-4-12 hex digits); like Consul, any hex digits are
// accepted, RFC 4122 version bits are not required.

/** Why `id` is not a UUID string, or undefined when it is one. */
export function nodeIdProblem(id: string): string | undefined {
  if (id.length !== 36) return 'uuid string is wrong length';
  if (id[8] !== '-' || id[13] !== '-' || id[18] !== '-' || id[23] !== '-') return 'uuid is improperly formatted';
  const hex = id.slice(0, 8) + id.slice(9, 13) + id.slice(14, 18) + id.slice(19, 23) + id.slice(24);
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) return 'uuid contains a non-hexadecimal character';
  return undefined;
}
