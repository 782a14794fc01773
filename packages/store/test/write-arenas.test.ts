// KV values a command writes are copied into write arenas (kv/value-arenas.ts, issue #34): never kept
// as views into the command's bytes, nor as an allocation each. Arenas that overwrites and deletes
// leave holding too little are copied out of and let go; the bytes every read and every snapshot
// gives stay those of a store that was never compacted.
import { readFileSync } from 'node:fs';
import { Store, WRITE_ARENA_BYTES, type Command, type RequestStamp } from '@registry/store';

const kv = (key: string, value: Uint8Array): Command => ({ type: 'kv.apply', op: { Verb: 'set', Key: key, Value: value, Flags: 0 } }) as Command;
const del = (key: string): Command => ({ type: 'kv.apply', op: { Verb: 'delete', Key: key } }) as Command;
const stamp = (i: number): RequestStamp => ({ id: `r.${i}`, at: 1_000 + i });
const key = (n: number) => `k/${String(n).padStart(4, '0')}`;
const values = (st: Store) => st.kvList('k/').value.map((e) => [e.Key, e.ModifyIndex, Buffer.from(e.Value ?? []).toString('hex')]);
const storedBytes = (st: Store) => st.kvList('k/').value.reduce((sum, e) => sum + (e.Value?.byteLength ?? 0), 0);
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Applies `cmd` to every store at the next index. */
function applyAll(stores: Store[], index: number, cmd: Command): number {
  for (const st of stores) st.apply(index + 1, cmd, stamp(index + 1));
  return index + 1;
}

test('a written value is a copy in a write arena, not a view into the command that carried it', () => {
  const st = new Store();
  const carrier = new Uint8Array(64 << 10).fill(7); // a frame holding more than the value
  const sent = carrier.subarray(1000, 1000 + 4096);
  st.apply(1, kv('k/a', sent), stamp(1));
  carrier.fill(9); // the frame's memory reused: the stored value must not change
  const stored = st.kvGet('k/a').value!.Value!;
  expect(stored.buffer).not.toBe(carrier.buffer);
  // The first write arena is small: a store that holds little holds little address space.
  expect(stored.buffer.byteLength).toBeLessThanOrEqual(1 << 20);
  expect(Buffer.from(stored).equals(Buffer.alloc(4096, 7))).toBe(true);
  expect(st.kvWriteArenasHeld()).toEqual({ arenas: 1, bytes: 4096, liveBytes: 4096 });
  // An empty value and a lock released (the key keeps its value) copy nothing.
  st.apply(2, kv('k/empty', new Uint8Array(0)), stamp(2));
  expect(st.kvWriteArenasHeld().bytes).toBe(4096);
});

test('overwrites and deletes empty write arenas: their values are copied into the current one and they are let go', async () => {
  const st = new Store();
  const reference = new Store();
  const both = [st, reference];
  let index = 0;
  // 120 values of 512 KiB: write arenas of 512 KiB, 1, 2, 4, 8, 16 MiB (each twice the last), then
  // WRITE_ARENA_BYTES being written.
  const big = (n: number, round: number) => new Uint8Array(512 << 10).fill((n * 13 + round) & 255);
  for (let n = 0; n < 120; n++) index = applyAll(both, index, kv(key(n), big(n, 0)));
  const full = st.kvWriteArenasHeld();
  expect(full.arenas).toBe(7);
  expect(full.liveBytes).toBe(120 * (512 << 10));
  // The 2 MiB arena: keys 3-6, of which 3 and 6 are kept below and 4 and 5 are not.
  const first = st.kvGet(key(3)).value!.Value!.buffer;
  expect(st.kvGet(key(6)).value!.Value!.buffer).toBe(first);
  expect(first.byteLength).toBe(2 << 20);

  // Overwrite two of every three of the first 64 (in the first arena) with small values, delete some.
  for (let n = 0; n < 64; n++) {
    if (n % 3 === 0) continue;
    index = applyAll(both, index, n % 5 === 0 ? del(key(n)) : kv(key(n), new Uint8Array(9).fill(n)));
  }
  const inFirst = () => st.kvList('k/').value.filter((e) => e.Value?.buffer === first).length;
  const settled = () => inFirst() === 0 && st.kvWriteArenasHeld().liveBytes === storedBytes(reference);
  for (let i = 0; i < 400 && !settled(); i++) await wait(5);
  expect(inFirst()).toBe(0);
  // Its two live values (and those of the other arenas left holding too little) were copied into
  // the arena being written, and the arenas they left were let go.
  const after = st.kvWriteArenasHeld();
  expect(after.liveBytes).toBe(storedBytes(reference));
  expect(after.bytes).toBeLessThan(full.bytes);
  expect(values(st)).toEqual(values(reference));
  expect(Buffer.compare(st.snapshot(), reference.snapshot())).toBe(0);

  // Deleting everything leaves only the arena being written.
  for (let n = 0; n < 120; n++) index = applyAll(both, index, del(key(n)));
  for (let i = 0; i < 200 && st.kvWriteArenasHeld().arenas > 1; i++) await wait(5);
  expect(st.kvWriteArenasHeld()).toMatchObject({ arenas: 1, liveBytes: 0 });
  expect(Buffer.compare(st.snapshot(), reference.snapshot())).toBe(0);
});

test('a value larger than an arena could hold many of is stored on its own, unchanged', () => {
  const st = new Store();
  const value = new Uint8Array((1 << 20) + 1).fill(3);
  st.apply(1, kv('k/huge', value), stamp(1));
  const stored = st.kvGet('k/huge').value!.Value!;
  expect(stored.byteLength).toBe(value.byteLength);
  expect(stored.buffer.byteLength).toBe(value.byteLength);
  expect(Buffer.from(stored).equals(Buffer.from(value))).toBe(true);
  expect(st.kvWriteArenasHeld().arenas).toBe(0);
});

test("a value that is a view into a SharedArrayBuffer (the log's entry bytes) is kept as that view, and copied out once its buffer holds too little", async () => {
  const st = new Store();
  const reference = new Store();
  // As raft's entry-bytes.ts cuts entries from a chunk: values one after another in one buffer.
  const chunk = new Uint8Array(new SharedArrayBuffer(1 << 20));
  const value = (n: number) => {
    const v = chunk.subarray(n * 8192, n * 8192 + 8000);
    v.fill(n + 1);
    return v;
  };
  let index = 0;
  for (let n = 0; n < 100; n++) {
    index++;
    st.apply(index, kv(key(n), value(n)), stamp(index));
    reference.apply(index, kv(key(n), new Uint8Array(value(n))), stamp(index));
  }
  const stored = st.kvGet(key(7)).value!.Value!;
  expect(stored.buffer).toBe(chunk.buffer); // adopted: no copy
  expect(stored.byteOffset).toBe(7 * 8192);
  expect(st.kvWriteArenasHeld().arenas).toBe(0);

  // Overwrite most of them: the chunk holds too little, and the rest are copied into a write arena.
  for (let n = 0; n < 80; n++) {
    index++;
    const cmd = kv(key(n), new Uint8Array(16).fill(n));
    st.apply(index, cmd, stamp(index));
    reference.apply(index, cmd, stamp(index));
  }
  const inChunk = () => st.kvList('k/').value.filter((e) => e.Value?.buffer === chunk.buffer).length;
  for (let i = 0; i < 200 && inChunk() > 0; i++) await wait(5);
  expect(inChunk()).toBe(0);
  expect(values(st)).toEqual(values(reference));
  expect(Buffer.compare(st.snapshot(), reference.snapshot())).toBe(0);
});

test('many small stores hold little address space (a test run forked no more once each store mapped 32 MiB)', () => {
  const vmSize = () => Number(/^VmSize:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
  const before = vmSize();
  const stores: Store[] = [];
  for (let i = 0; i < 500; i++) {
    const st = new Store();
    st.apply(1, kv('k/a', new Uint8Array(100).fill(i & 255)), stamp(1));
    stores.push(st);
  }
  expect(stores.every((st) => st.kvGet('k/a').value!.Value!.byteLength === 100)).toBe(true);
  expect(vmSize() - before).toBeLessThan(1024 << 20);
});
