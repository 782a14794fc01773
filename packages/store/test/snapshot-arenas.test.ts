// Store.restoreFrom(source) from a source that reads into memory it is given (a stored snapshot, issue
// #34): the snapshot is read into arenas allocated at once and KV values stay views into them. The
// state is the one restore() gives from the whole bytes, whatever the arenas' size (items cut at every
// seam, values longer than an arena); writes and deletes that leave an arena holding too little make
// the store copy the rest out and let the arena go, with every value's bytes unchanged.
import { getHeapStatistics } from 'node:v8';
import { Store, type Command, type RequestStamp } from '@registry/store';
import { fullGc } from './support/full-gc';

const kv = (key: string, value: Uint8Array): Command => ({ type: 'kv.apply', op: { Verb: 'set', Key: key, Value: value, Flags: 0 } }) as Command;
const del = (key: string): Command => ({ type: 'kv.apply', op: { Verb: 'delete', Key: key } }) as Command;
const stamp = (i: number): RequestStamp => ({ id: `r.${i}`, at: 1_000 + i });

/** A catalog, then `kvs` values of every size from a few bytes to 40 KB, one deleted. */
function fill(store: Store, kvs: number): number {
  let index = 0;
  for (let n = 0; n < 20; n++) {
    const req = { Node: `n${n}`, Address: `10.0.0.${n}`, Service: { ID: `s${n}`, Service: 'web', Port: 80 } };
    store.apply(++index, { type: 'catalog.register', req } as Command, stamp(index));
  }
  for (let n = 0; n < kvs; n++) {
    const size = n % 11 === 0 ? 40_000 : n % 3 === 0 ? 4096 : 5 + n;
    store.apply(++index, kv(`k/${String(n).padStart(4, '0')}`, new Uint8Array(size).fill((n * 7) & 255)), stamp(index));
  }
  store.apply(++index, del('k/0004'), stamp(index));
  return index;
}

/** A source over `data` that can read into memory it is given, in order, as Raft's stored snapshot can. */
function rangeSource(data: Uint8Array) {
  const ranges: [number, number][] = [];
  const reads: number[] = [];
  return {
    ranges,
    reads,
    source: {
      chunks: 1,
      size: data.length,
      read: async (i: number): Promise<Uint8Array> => {
        reads.push(i);
        return data;
      },
      readRange: async (offset: number, into: Uint8Array) => {
        ranges.push([offset, into.length]);
        into.set(data.subarray(offset, offset + into.length));
      },
    },
  };
}

const values = (st: Store) => st.kvList('k/').value.map((e) => [e.Key, e.ModifyIndex, Buffer.from(e.Value ?? []).toString('hex')]);
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));


test.each([7, 1000, 20_000, 64 << 10, 1 << 20])('arenas of %i bytes restore the state the whole bytes restore', async (arenaBytes) => {
  const origin = new Store();
  fill(origin, arenaBytes < 1000 ? 40 : 300);
  const data = origin.snapshot();
  const whole = new Store();
  whole.restore(data);
  const { ranges, reads, source } = rangeSource(data);
  const restored = new Store();
  await restored.restoreFrom(source, { sliceMs: 1, arenaBytes, arenaMinSnapshotBytes: 0 });
  // In order, each byte once, one arena at a time.
  expect(reads).toEqual([]);
  expect(ranges.map(([o]) => o)).toEqual(ranges.map((_, k) => k * arenaBytes));
  expect(ranges.reduce((n, [, l]) => n + l, 0)).toBe(data.length);
  expect(Buffer.compare(restored.snapshot(), data)).toBe(0);
  expect(values(restored)).toEqual(values(whole));
  expect(restored.catalogNodes().value).toEqual(whole.catalogNodes().value);
  // Values are not copied: arenas that are mostly values are kept; the others are emptied.
  if (arenaBytes >= 64 << 10) expect(restored.kvArenasHeld().arenas).toBeGreaterThan(0);
});

test('one arena over the whole snapshot, with a 3 MB value in it', async () => {
  const origin = new Store();
  let index = fill(origin, 600);
  const big = new Uint8Array(3 << 20).map((_, i) => i & 255);
  origin.apply(++index, kv('k/big', big), stamp(index));
  const data = origin.snapshot();
  const { ranges, source } = rangeSource(data);
  const restored = new Store();
  await restored.restoreFrom(source, { arenaBytes: 16 << 20, arenaMinSnapshotBytes: 0 });
  expect(ranges).toHaveLength(1);
  expect(Buffer.compare(restored.snapshot(), data)).toBe(0);
  const value = restored.kvGet('k/big').value!.Value!;
  expect(Buffer.compare(value, big)).toBe(0);
  expect(value.buffer.byteLength).toBe(data.length);
});

test('with a large heap already in use, the reads stay two arenas ahead: the same state, values still in arenas', async () => {
  const origin = new Store();
  fill(origin, 300);
  const data = origin.snapshot();
  const restored = new Store();
  await restored.restoreFrom(rangeSource(data).source, { arenaBytes: 64 << 10, arenaMinSnapshotBytes: 0, readToEndHeapBytes: 0 });
  expect(Buffer.compare(restored.snapshot(), data)).toBe(0);
  expect(restored.kvArenasHeld().arenas).toBeGreaterThan(0);
});

test('the arenas are memory V8 does not count as new external memory (it marks the heap for every 64 MiB of that)', async () => {
  const origin = new Store();
  let index = 0;
  const value = new Uint8Array(4096).fill(7);
  for (let n = 0; n < 4096; n++) origin.apply(++index, kv(`k/${String(n).padStart(4, '0')}`, value), stamp(index));
  const data = origin.snapshot();
  const restored = new Store();
  // Counted after full collections and their ArrayBuffer sweeping (which runs beside the loop and
  // only then lowers the count), so that buffers let go meanwhile (the encoder's) do not offset
  // what the restore added.
  const gc = fullGc();
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await wait(20);
    }
  };
  await settle();
  const before = getHeapStatistics().external_memory;
  await restored.restoreFrom(rangeSource(data).source);
  await settle();
  const grown = getHeapStatistics().external_memory - before;
  // 16 MiB of values, held in arenas, and V8's external memory not grown by them.
  expect(restored.kvArenasHeld().liveBytes).toBeGreaterThanOrEqual(16 << 20);
  expect(grown).toBeLessThan(4 << 20);
  expect(Buffer.compare(restored.kvGet('k/4095').value!.Value!, value)).toBe(0);
});

test('a value in an arena is a plain Uint8Array view into it', async () => {
  const origin = new Store();
  fill(origin, 300);
  const restored = new Store();
  await restored.restoreFrom(rangeSource(origin.snapshot()).source, { arenaBytes: 1 << 20, arenaMinSnapshotBytes: 0 });
  const value = restored.kvGet('k/0011').value!.Value!;
  expect(Buffer.isBuffer(value)).toBe(false);
  expect(value.buffer.byteLength).toBe(1 << 20);
});

test('overwrites and deletes empty an arena: its values are copied out, their bytes unchanged, and it is let go', async () => {
  const origin = new Store();
  let index = fill(origin, 300);
  const restored = new Store();
  await restored.restoreFrom(rangeSource(origin.snapshot()).source, { arenaBytes: 512 << 10, arenaMinSnapshotBytes: 0 });
  const before = restored.kvArenasHeld();
  expect(before.arenas).toBeGreaterThan(1);
  expect(before.liveBytes).toBeGreaterThan((2 / 3) * before.bytes * 0.9);

  // Overwrite or delete every other 40 KB value (most of the bytes), in both stores alike.
  for (let n = 0; n < 300; n += 22) {
    const cmd = n % 44 === 0 ? del(`k/${String(n).padStart(4, '0')}`) : kv(`k/${String(n).padStart(4, '0')}`, new Uint8Array(9).fill(n & 255));
    index++;
    origin.apply(index, cmd, stamp(index));
    restored.apply(index, cmd, stamp(index));
  }
  for (let i = 0; i < 100 && restored.kvArenasHeld().arenas >= before.arenas; i++) await wait(5);
  const after = restored.kvArenasHeld();
  expect(after.arenas).toBeLessThan(before.arenas);
  expect(after.liveBytes).toBeGreaterThanOrEqual((2 / 3) * after.bytes);
  expect(Buffer.compare(restored.snapshot(), origin.snapshot())).toBe(0);
  expect(values(restored)).toEqual(values(origin));

  // Deleting everything lets every arena go.
  for (let n = 0; n < 300; n++) {
    index++;
    origin.apply(index, del(`k/${String(n).padStart(4, '0')}`), stamp(index));
    restored.apply(index, del(`k/${String(n).padStart(4, '0')}`), stamp(index));
  }
  for (let i = 0; i < 100 && restored.kvArenasHeld().arenas > 0; i++) await wait(5);
  expect(restored.kvArenasHeld()).toEqual({ arenas: 0, bytes: 0, liveBytes: 0 });
  expect(Buffer.compare(restored.snapshot(), origin.snapshot())).toBe(0);
});

test('a source without readRange, or a snapshot below the threshold, is restored by copying', async () => {
  const origin = new Store();
  fill(origin, 300);
  const data = origin.snapshot();
  const small = rangeSource(data);
  const restored = new Store();
  await restored.restoreFrom(small.source, { arenaBytes: 1 << 20 });
  expect(small.ranges).toEqual([]);
  expect(small.reads).toEqual([0]);
  const { readRange: _, ...piecesOnly } = rangeSource(data).source;
  const copied = new Store();
  await copied.restoreFrom(piecesOnly, { arenaBytes: 1 << 20, arenaMinSnapshotBytes: 0 });
  for (const st of [restored, copied]) {
    expect(st.kvArenasHeld().arenas).toBe(0);
    expect(Buffer.compare(st.snapshot(), data)).toBe(0);
    const value = st.kvGet('k/0011').value!.Value!;
    expect(value.buffer.byteLength).toBe(value.byteLength);
  }
});

test('bytes that are not a snapshot are refused and the store stays as it was', async () => {
  const restored = new Store();
  restored.apply(1, kv('kept', new Uint8Array([1, 2, 3])), stamp(1));
  const junk = new Uint8Array(100_000).fill(0xc1);
  await expect(restored.restoreFrom(rangeSource(junk).source, { arenaBytes: 4096, arenaMinSnapshotBytes: 0 })).rejects.toThrow(/not a registry state snapshot/);
  expect(Buffer.from(restored.kvGet('kept').value!.Value!)).toEqual(Buffer.from([1, 2, 3]));
});
