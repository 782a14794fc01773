// A stored row with its Raft indexes, made in one place.
//
// Why not `{ ...data, CreateIndex, ModifyIndex }`: V8 (Node 20) gives every object made that way a
// hidden class of its own. The spread's copy starts from a map outside the transition tree, so each
// property added after it makes a new map and descriptor array instead of following a shared
// transition. Per row that cost ~3.6 µs and ~280 bytes kept for as long as the row (~380 B against
// ~100 B; `bench/store/record-shapes.js`), and every table read saw a different map. Object.assign
// onto an empty literal follows the shared transitions. (It sets properties where spread defines
// them; a row's fields are the store's own names, never `__proto__`, and msgpackr renames that key
// when it decodes a command.)
import type { RaftIndexes } from './catalog/records';

export function withIndexes<T extends object>(data: T, createIndex: number, modifyIndex: number): T & RaftIndexes {
  return Object.assign({}, data, { CreateIndex: createIndex, ModifyIndex: modifyIndex });
}
