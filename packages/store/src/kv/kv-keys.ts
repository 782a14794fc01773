// Watch keys of the KV store. A write to key "a/b" changes what every prefix read of "", "a", "a/",
// "a/b" sees, so it bumps the watch key of each of those prefixes; a single-key read watches its own
// key's prefix entry. The per-prefix keys never keep an index entry (their reads compute the index
// from the entries and tombstones), so the index table does not grow with every prefix ever written.

export const KVS = 'kvs';
export const KV_PREFIX = 'kvp:';

export function kvPrefixWatchKey(prefix: string): string {
  return KV_PREFIX + prefix;
}

/** Every prefix watch key a write to `key` must wake, from "" to the key itself. */
export function kvWriteWatchKeys(key: string): string[] {
  const keys = new Array<string>(key.length + 1);
  for (let i = 0; i <= key.length; i++) keys[i] = KV_PREFIX + key.slice(0, i);
  return keys;
}
