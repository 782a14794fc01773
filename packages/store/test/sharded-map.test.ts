// The KV table, the catalog's node-sized maps, the index table and lane 0 of the request window keep
// their keys in a ShardedMap (sharded-map.ts): one Map while small, 64 once large, so that no single
// write or restore step pays the rehash of a whole table of hundreds of thousands of keys. It must
// behave as one Map, and spread the key sets tables really hold — numbered keys, paths around UUIDs
// sharing long prefixes and suffixes, serials.
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { ShardedMap } from '../src/sharded-map';

type Op = { kind: 'set'; key: string; value: number } | { kind: 'delete'; key: string };

test('it answers as one Map would, whatever the writes', () => {
  const key = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', 'a', 'kv/a', 'kv/b', 'a'.repeat(100)));
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 8, arbitrary: fc.record({ kind: fc.constant('set' as const), key, value: fc.integer() }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), key }) },
  );
  fc.assert(
    fc.property(fc.boolean(), fc.array(op, { maxLength: 200 }), fc.array(key, { maxLength: 20 }), (large, ops, probes) => {
      const model = new Map<string, number>();
      const sharded = new ShardedMap<string, number>();
      // Past the size at which it splits into its shards, or as one small Map.
      for (let i = 0; large && i < 300; i++) {
        model.set(`pre/${i}`, i);
        sharded.set(`pre/${i}`, i);
      }
      for (const o of ops) {
        if (o.kind === 'set') {
          model.set(o.key, o.value);
          expect(sharded.set(o.key, o.value)).toBe(sharded);
        } else expect(sharded.delete(o.key)).toBe(model.delete(o.key));
        expect(sharded.size).toBe(model.size);
      }
      for (const k of [...probes, ...model.keys()]) {
        expect(sharded.get(k)).toBe(model.get(k));
        expect(sharded.has(k)).toBe(model.has(k));
      }
      const sortedEntries = (it: Iterable<[string, number]>) => [...it].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      expect(sortedEntries(sharded)).toEqual(sortedEntries(model));
      expect(sortedEntries(sharded.entries())).toEqual(sortedEntries(model.entries()));
      expect([...sharded.keys()].sort()).toEqual([...model.keys()].sort());
      expect([...sharded.values()].sort()).toEqual([...model.values()].sort());
    }),
  );
});

test('number keys are their own: a serial and its string are two keys', () => {
  const m = new ShardedMap<string | number, string>();
  m.set(7, 'seven').set('7', 'string seven');
  expect(m.get(7)).toBe('seven');
  expect(m.get('7')).toBe('string seven');
  expect(m.size).toBe(2);
});

/** How the entries of `keys` fall across the shards: the fullest shard's share against an even one. */
function crowding(keys: Iterable<string | number>): number {
  const m = new ShardedMap<string | number, true>();
  for (const k of keys) m.set(k, true);
  // The shards themselves (private): the spread is what the class is for.
  const shards = (m as unknown as { shards: Map<unknown, unknown>[] }).shards;
  const fullest = Math.max(...shards.map((s) => s.size));
  return fullest / (m.size / shards.length);
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

test.each([
  ['numbered keys', range(20_000).map((i) => `app/${String(i).padStart(8, '0')}`)],
  ['paths around a UUID', range(20_000).map(() => `service/${randomUUID()}/config`)],
  ['one long prefix and suffix, a short counter', range(20_000).map((i) => `${'x'.repeat(60)}/${i}/${'y'.repeat(60)}`)],
  ['serials', range(20_000).map((i) => i + 1)],
])('%s spread over the shards (the fullest under 1.5× an even share)', (_name, keys) => {
  expect(crowding(keys)).toBeLessThan(1.5);
});
