// WalStorage beyond the contract every storage meets (storage.test.ts): segments preallocated,
// rolled and removed once a snapshot covers them, the hard state kept across removals, a torn tail
// zeroed, corruption in an older segment refused, and a log still held in LevelDB moved into the WAL
// on first open.
import { closeSync, openSync, readdirSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { EntryType, LevelStorage, parseSegment, type Entry, type SnapshotMeta } from '@registry/raft';
import { Packr } from 'msgpackr';
import { tempDirs, walStorage } from '../support/storages';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const entry = (index: number, term: number): Entry => ({ index, term, type: EntryType.Normal, data: bytes(`e${index}t${term}`.padEnd(100, '.')) });
const range = (from: number, to: number, term: number) => Array.from({ length: to - from + 1 }, (_, i) => entry(from + i, term));
const indexes = (entries: Entry[]) => entries.map((e) => e.index);
const meta = (index: number, term: number): SnapshotMeta => ({ index, term, configuration: { servers: [{ id: 'a', address: '127.0.0.1:1' }] } });
const segments = (dir: string) => readdirSync(join(dir, 'wal')).filter((n) => n.endsWith('.wal')).sort();

const tempDir = tempDirs('raft-wal-');

test('segments roll at their size and those a snapshot covers are removed; the hard state survives the removal', async () => {
  const dir = tempDir();
  let storage = walStorage(dir, 2048);
  await storage.load();
  await storage.append({ term: 3, vote: 'b', commit: 0 }, range(1, 1, 3));
  for (let i = 2; i <= 200; i += 2) await storage.append(undefined, range(i, i + 1, 3));
  const rolled = segments(dir);
  expect(rolled.length).toBeGreaterThan(8);

  await storage.saveSnapshot(meta(180, 3), bytes('state@180'), 170);
  const kept = segments(dir);
  // Everything but the segments holding entries above 170 (and the newest, which takes writes) is gone.
  expect(kept.length).toBeLessThan(4);
  expect(kept[kept.length - 1]).toBe(rolled[rolled.length - 1]);
  await storage.close();

  storage = walStorage(dir, 2048);
  const state = await storage.load();
  expect(state.hardState).toEqual({ term: 3, vote: 'b', commit: 0 });
  expect(indexes(state.entries)).toEqual(indexes(range(171, 201, 3)));
  expect(text(state.snapshot!.data)).toBe('state@180');
  await storage.close();
});

test('a record cut short by a crash is dropped, its remains zeroed, and later writes land after the last whole record', async () => {
  const dir = tempDir();
  let storage = walStorage(dir);
  await storage.load();
  await storage.append({ term: 1, vote: 'a', commit: 0 }, range(1, 5, 1));
  await storage.close();
  const [segment] = segments(dir);
  const path = join(dir, 'wal', segment);
  const before = readFileSync(path);
  const end = parseSegment(before).end;
  expect(end).toBeGreaterThan(0);
  // What a crash in the middle of a write leaves after the last whole record: a header that
  // promises more than follows, and part of a body.
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.from([0x40, 0, 0, 0, 1, 2, 3, 4, 9, 9, 9]), 0, 11, end);
  closeSync(fd);

  storage = walStorage(dir);
  expect(indexes((await storage.load()).entries)).toEqual([1, 2, 3, 4, 5]);
  const after = readFileSync(path);
  expect(after.length).toBe(before.length); // still preallocated
  expect(after.subarray(end).every((b) => b === 0)).toBe(true);
  await storage.append(undefined, range(6, 7, 1));
  await storage.close();

  storage = walStorage(dir);
  expect(indexes((await storage.load()).entries)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  await storage.close();
});

test('segments are zero-filled to their size before they take records, and the next one is made before it is needed', async () => {
  const dir = tempDir();
  const storage = walStorage(dir, 8192);
  await storage.load();
  await storage.append({ term: 1, vote: 'a', commit: 0 }, range(1, 1, 1));
  const [first] = segments(dir);
  expect(statSync(join(dir, 'wal', first)).size).toBe(8192);
  for (let i = 2; i <= 40; i++) await storage.append(undefined, range(i, i, 1));
  // Past half of the first: its successor exists, zero-filled, under a temporary name until it is used.
  expect(segments(dir)).toEqual([first]);
  const spare = readdirSync(join(dir, 'wal')).filter((n) => n.endsWith('.wal.tmp'));
  expect(spare).toHaveLength(1);
  // It is made in the background: give it a moment (bounded) to be filled.
  for (let waited = 0; statSync(join(dir, 'wal', spare[0])).size < 8192 && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  expect(statSync(join(dir, 'wal', spare[0])).size).toBe(8192);
  // The next records that do not fit go into it, renamed into place.
  for (let i = 41; i <= 80; i++) await storage.append(undefined, range(i, i, 1));
  expect(segments(dir)[1]).toBe(spare[0].replace('.tmp', ''));
  await storage.close();
  // Closing drops an unused spare; nothing but segments is left.
  expect(readdirSync(join(dir, 'wal')).every((n) => n.endsWith('.wal'))).toBe(true);
});

test('a damaged record in an older segment is refused, not skipped', async () => {
  const dir = tempDir();
  let storage = walStorage(dir, 1024);
  await storage.load();
  for (let i = 1; i <= 40; i += 4) await storage.append({ term: 1, vote: 'a', commit: 0 }, range(i, i + 3, 1));
  await storage.close();
  const [oldest] = segments(dir);
  const path = join(dir, 'wal', oldest);
  const damaged = readFileSync(path);
  damaged[20] ^= 0xff;
  writeFileSync(path, damaged);
  storage = walStorage(dir, 1024);
  await expect(storage.load()).rejects.toThrow(/write-ahead log .* is corrupt at byte 0: a CRC mismatch/);
  await storage.close().catch(() => undefined);
});

test('a log that LevelStorage holds is moved into the WAL on first open, and LevelDB keeps only the snapshot', async () => {
  const dir = tempDir();
  const snapshots = join(dir, 'snapshots');
  const level = new LevelStorage({ path: snapshots });
  await level.load();
  await level.append({ term: 2, vote: 'c', commit: 12 }, range(1, 20, 2));
  await level.saveSnapshot(meta(10, 2), bytes('state@10'), 8);
  await level.close();

  let storage = walStorage(dir);
  const moved = await storage.load();
  expect(moved.hardState).toEqual({ term: 2, vote: 'c', commit: 12 });
  expect(indexes(moved.entries)).toEqual(indexes(range(9, 20, 2)));
  expect(text(moved.snapshot!.data)).toBe('state@10');
  await storage.append(undefined, range(21, 22, 2));
  await storage.close();

  const levelAlone = new LevelStorage({ path: snapshots });
  const left = await levelAlone.load();
  await levelAlone.close();
  expect(left.entries).toEqual([]);
  expect(left.hardState).toEqual({ term: 0, vote: null, commit: 0 });
  expect(text(left.snapshot!.data)).toBe('state@10');

  storage = walStorage(dir);
  const again = await storage.load();
  expect(again.hardState).toEqual({ term: 2, vote: 'c', commit: 12 });
  expect(indexes(again.entries)).toEqual(indexes(range(9, 22, 2)));
  await storage.close();
});

test('segments go only from the oldest: an overwrite in a removed segment never lets the entries it replaced come back', async () => {
  const dir = tempDir();
  let storage = walStorage(dir, 1000);
  await storage.load();
  await storage.append({ term: 1, vote: 'a', commit: 0 }, range(1, 30, 1)); // one record larger than a segment: all of S1
  await storage.append(undefined, range(10, 12, 2)); // S2: a new leader's entries overwrite from 10
  await storage.append(undefined, range(13, 17, 2));
  expect(segments(dir)).toHaveLength(2);
  // Records without entries (term changes) until one opens S3.
  let term = 2;
  while (segments(dir).length < 3 && term < 100) await storage.append({ term: ++term, vote: 'c', commit: 0 }, []);
  expect(segments(dir)).toHaveLength(3);
  // S2 holds nothing above 17, S1 does (its old 18..30): S1 must stay, and so must S2 after it.
  await storage.saveSnapshot(meta(17, 2), bytes('state@17'), 17);
  await storage.close();

  storage = walStorage(dir, 1000);
  const state = await storage.load();
  await storage.close();
  expect(state.entries).toEqual([]);
  expect(state.hardState).toEqual({ term, vote: 'c', commit: 0 });
});

test('entries of every size come back byte for byte, one msgpack record per append, their payloads written where they lie', async () => {
  const dir = tempDir();
  let storage = walStorage(dir, 8 << 20);
  await storage.load();
  const payload = (index: number, size: number) => {
    const data = new Uint8Array(size);
    for (let i = 0; i < size; i++) data[i] = (index * 31 + i) & 0xff;
    return data;
  };
  // Around each msgpack length form (bin 8/16/32) and the size from which a payload is referenced.
  const sizes = [0, 1, 127, 128, 255, 256, 1023, 1024, 1025, 65535, 65536, 70000];
  const first: Entry[] = sizes.map((size, i) => ({ index: i + 1, term: 2 ** 32 + 7, type: (i % 3) as EntryType, data: payload(i + 1, size) }));
  // More large payloads than one writev may reference (the rest are copied), and a long array header.
  const many: Entry[] = Array.from({ length: 600 }, (_, i) => ({ index: 13 + i, term: 2 ** 32 + 7, type: EntryType.Normal, data: payload(13 + i, 1500) }));
  const hard = { term: 2 ** 32 + 7, vote: 'b', commit: 3 };
  await storage.append(hard, first);
  await storage.append(undefined, many);
  const written = [...first, ...many];
  const view = (entries: Entry[]) => entries.map((e) => ({ index: e.index, term: e.term, type: e.type, data: Buffer.from(e.data).toString('base64') }));
  await storage.close();

  storage = walStorage(dir, 8 << 20);
  const state = await storage.load();
  await storage.close();
  expect(state.hardState).toEqual(hard);
  expect(view(state.entries)).toEqual(view(written));
  // What is on disk: one record per append, each a msgpack map any reader decodes.
  const [segment] = segments(dir);
  const { bodies } = parseSegment(readFileSync(join(dir, 'wal', segment)));
  expect(bodies).toHaveLength(2);
  const records = bodies.map((b) => new Packr({ useRecords: false }).unpack(b) as { h?: object; f: number; e: [number, number, Uint8Array][] });
  expect(records.map((r) => [r.h, r.f, r.e.length])).toEqual([
    [hard, 1, 12],
    [undefined, 13, 600],
  ]);
});
