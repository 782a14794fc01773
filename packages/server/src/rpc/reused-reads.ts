// Non-blocking reads of the same endpoint with the same arguments and token give the same
// answer until the store applies another entry. Many clients polling one service therefore
// cost one store walk per change, and — because the answer's value is marked here — one JSON
// encoding per change in the HTTP layer. Only endpoints whose routes return the value
// untouched may be reused: an endpoint says so itself (`reuse: true` in its `read({...})`,
// endpoints/catalog-reads.ts and health-reads.ts), and rpc.ts asks only those here.
// A write still starts a new memory, but what follows is not a full rebuild where it was the
// cost (issue #16): the catalog's node listing is kept sorted in the store with one shared output
// object per row (store/catalog/node-listing.ts), and large lists are written in slices with each
// shared row's JSON kept (http/sliced-json.ts), so a write re-encodes only the rows it changed.
import type { QueryResult } from './blocking';

/** Distinct reads remembered between two applies; past this the memory starts afresh. */
const MAX_ENTRIES = 1024;

/**
 * Values handed to more than one request since the last apply, and their JSON. Both are
 * forgotten whenever a memory of reads starts afresh, so nothing outlives a store change.
 */
let shared = new WeakSet<object>();
let encoded = new WeakMap<object, Buffer>();

/**
 * JSON.stringify, done once per shared value. A shared value's JSON is kept as UTF-8 bytes: each
 * answer then hands the socket the same buffer, where a string would be joined to the headers and
 * converted to bytes again for every request (a `?stale` read profile: the conversion, the flattening
 * of the joined string and the young-generation copies of it were ~10 % of a 3.8 KB answer's cost).
 */
export function encodeJson(value: unknown): string | Buffer {
  if (typeof value !== 'object' || value === null || !shared.has(value)) return JSON.stringify(value);
  let bytes = encoded.get(value);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(value));
    encoded.set(value, bytes);
  }
  return bytes;
}

export class ReusedReads {
  private entries = new Map<string, QueryResult>();
  private at = -1;

  /** The result of `run`, or of the identical read made since the store reached `storeIndex`. */
  get(storeIndex: number, name: string, token: string | undefined, args: unknown, run: () => QueryResult): QueryResult {
    if (storeIndex !== this.at || this.entries.size >= MAX_ENTRIES) {
      this.entries = new Map();
      this.at = storeIndex;
      shared = new WeakSet();
      encoded = new WeakMap();
    }
    const key = `${name}\u0000${token ?? ''}\u0000${JSON.stringify(args)}`;
    let result = this.entries.get(key);
    if (!result) {
      result = run();
      if (typeof result.value === 'object' && result.value !== null) shared.add(result.value);
      this.entries.set(key, result);
    }
    return result;
  }
}
