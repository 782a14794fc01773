// Snapshots stored in pieces: saveSnapshot takes pieces, createSnapshot streams them and makes the
// snapshot visible only at commit(), readSnapshot gives them back one at a time, load() joins them.
// LevelStorage (snapshot files): a process killed between pieces leaves the previous snapshot whole
// (and its temporary file is removed at the next open); a store written with the one-value layout
// still loads, its snapshot moved into a file.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { Packr } from 'msgpackr';
import { describeStorageError, EntryType, LevelStorage, type Entry, type SnapshotMeta, type SnapshotReader } from '@registry/raft';
import { storageFactories, tempDirs } from '../support/storages';
import { Tmpfs } from '../support/tmpfs';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const meta = (index: number, term: number): SnapshotMeta => ({ index, term, configuration: { servers: [{ id: 'a', address: '127.0.0.1:1' }] } });
const entry = (index: number, term: number): Entry => ({ index, term, type: EntryType.Normal, data: bytes(`e${index}`) });

const tempDir = tempDirs('raft-chunks-');
const disk = Tmpfs.mount('raft-chunks-enospc-', 4);
afterEach(() => disk.free());
afterAll(() => disk.unmount());

async function readAll(reader: SnapshotReader): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < reader.chunks; i++) out.push(text(await reader.read(i)));
  return out;
}

/** Pieces whose concatenation is `s`, `n` characters each. */
const split = (s: string, n: number) => Array.from({ length: Math.ceil(s.length / n) }, (_, i) => bytes(s.slice(i * n, (i + 1) * n)));

const factories = storageFactories(tempDir);

describe.each(factories)('$name: snapshots in pieces', ({ open }) => {
  test('pieces saved are loaded joined and read back one at a time; the log is compacted as before', async () => {
    const { storage, reopen } = open();
    await storage.append({ term: 1, vote: 'a', commit: 10 }, Array.from({ length: 10 }, (_, i) => entry(i + 1, 1)));
    await storage.saveSnapshot(meta(8, 1), split('state-at-eight-in-pieces', 5), 6);
    const again = await reopen();
    const state = await again.load();
    expect(state.snapshot?.meta).toEqual(meta(8, 1));
    expect(text(state.snapshot!.data)).toBe('state-at-eight-in-pieces');
    expect(state.entries.map((e) => e.index)).toEqual([7, 8, 9, 10]);
    const reader = (await again.readSnapshot!())!;
    expect(reader.meta).toEqual(meta(8, 1));
    expect(reader.size).toBe('state-at-eight-in-pieces'.length);
    expect((await readAll(reader)).join('')).toBe('state-at-eight-in-pieces');
    reader.close();
    await again.close();
  });

  test('a streamed snapshot is invisible until commit(); abort() keeps the previous one', async () => {
    const { storage, reopen } = open();
    await storage.saveSnapshot(meta(5, 1), bytes('old'), Infinity);
    const sink = storage.createSnapshot!(meta(9, 2), Infinity);
    // The writer reuses its buffer after each write: the sink must have taken what it needs.
    const buffer = new Uint8Array(4);
    for (const piece of ['new-', 'stat', 'e!']) {
      buffer.set(bytes(piece));
      await sink.write(buffer.subarray(0, piece.length));
      buffer.fill(0x2a);
    }
    expect(sink.size).toBe(10);
    expect(text((await storage.load()).snapshot!.data)).toBe('old');
    const before = (await storage.readSnapshot!())!;
    expect(before.meta.index).toBe(5);
    before.close();
    await sink.commit();
    expect(text((await storage.load()).snapshot!.data)).toBe('new-state!');

    const abandoned = storage.createSnapshot!(meta(12, 2), Infinity);
    await abandoned.write(bytes('never'));
    await abandoned.abort();
    await expect(abandoned.commit()).rejects.toThrow(/aborted/);
    const again = await reopen();
    const state = await again.load();
    expect(state.snapshot?.meta.index).toBe(9);
    expect(text(state.snapshot!.data)).toBe('new-state!');
    await again.close();
  });

  test('an empty snapshot is stored and loads as zero bytes', async () => {
    const { storage, reopen } = open();
    await storage.saveSnapshot(meta(3, 1), [], Infinity);
    const again = await reopen();
    const state = await again.load();
    expect(state.snapshot?.meta.index).toBe(3);
    expect(state.snapshot!.data.length).toBe(0);
    await again.close();
  });
});

describe('LevelStorage: crashes and the one-value layout', () => {
  test('a process killed while streaming a snapshot leaves the previous one intact; its temporary file is removed on open', async () => {
    const path = tempDir();
    // The child saves a first snapshot, then streams a second one piece by piece, never committing.
    const child = spawn(process.execPath, [join(__dirname, 'chunked-snapshot-child.js'), path], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`child did not start streaming: ${out}`)), 20_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (/pieces 20\b/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('exit', (code) => reject(new Error(`child exited early (${code}): ${out}`)));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(readdirSync(join(path, 'snapshots')).filter((n) => n.endsWith('.tmp'))).toHaveLength(1);

    const storage = new LevelStorage({ path });
    const state = await storage.load();
    expect(state.snapshot?.meta.index).toBe(4);
    expect(text(state.snapshot!.data)).toBe('first snapshot, committed');
    await storage.close();
    // The committed snapshot's file only; the 20+ pieces of the other went with its temporary file.
    expect(readdirSync(join(path, 'snapshots'))).toEqual([expect.stringMatching(/-1-4\.snap$/)]);
  });

  test('a store with the one-value snapshot layout (data format 1) loads, sends, and its snapshot is moved into a file', async () => {
    const path = tempDir();
    const packr = new Packr({ useRecords: false });
    const db = new Level<string, Uint8Array>(path, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.batch([
      { type: 'put', key: 'hardstate', value: packr.pack({ term: 2, vote: 'a', commit: 7 }) },
      { type: 'put', key: 'snapshot-meta', value: packr.pack(meta(7, 2)) },
      { type: 'put', key: 'snapshot-data', value: bytes('legacy state') },
    ]);
    await db.close();

    const storage = new LevelStorage({ path });
    const state = await storage.load();
    expect(state.snapshot?.meta).toEqual(meta(7, 2));
    expect(text(state.snapshot!.data)).toBe('legacy state');
    const reader = (await storage.readSnapshot())!;
    expect(reader.meta).toEqual(meta(7, 2));
    expect(await readAll(reader)).toEqual(['legacy state']);
    reader.close();
    await storage.close();
    const raw = new Level<string, Uint8Array>(path, { keyEncoding: 'utf8', valueEncoding: 'view' });
    expect(await raw.getMany(['snapshot-meta', 'snapshot-data'])).toEqual([undefined, undefined]);
    await raw.close();

    const again = new LevelStorage({ path });
    await again.saveSnapshot(meta(9, 2), split('chunked state', 4), Infinity);
    await again.close();
    const later = await new LevelStorage({ path }).load();
    expect(later.snapshot?.meta).toEqual(meta(9, 2));
    expect(text(later.snapshot!.data)).toBe('chunked state');
    expect(readdirSync(join(path, 'snapshots'))).toHaveLength(1);
  });

  test('a reader of a replaced snapshot goes on reading the snapshot it opened (its file stays readable), never a mix of two', async () => {
    const storage = new LevelStorage({ path: tempDir() });
    const big = (c: string) => new Uint8Array((1 << 20) + 5).fill(c.charCodeAt(0));
    await storage.saveSnapshot(meta(3, 1), big('a'), Infinity);
    const reader = (await storage.readSnapshot())!;
    expect(reader.chunks).toBe(2);
    expect((await reader.read(0)).every((b) => b === 0x61)).toBe(true);
    await storage.saveSnapshot(meta(6, 1), big('c'), Infinity);
    const rest = await reader.read(1);
    expect(rest.length).toBe(5);
    expect(rest.every((b) => b === 0x61)).toBe(true);
    reader.close();
    expect(text((await storage.load()).snapshot!.data).slice(0, 1)).toBe('c');
    await storage.close();
  });
});

test('LevelStorage on a full disk: a snapshot whose write failed leaves no file behind, the previous snapshot stays', async () => {
  if (!disk.mounted) return console.warn(disk.skipReason);
  const db = new Level<string, Uint8Array>(join(disk.dir, 'db'), { keyEncoding: 'utf8', valueEncoding: 'view' });
  const snapshotDir = join(disk.dir, 'snapshots');
  const storage = new LevelStorage({ db, prefix: 'raft', snapshotDir });
  await storage.load();
  const piece = (c: string) => new Uint8Array(64 << 10).fill(c.charCodeAt(0));
  await storage.saveSnapshot(meta(5, 1), [piece('a'), piece('a')], Infinity);

  const sink = storage.createSnapshot(meta(9, 1), Infinity);
  for (let i = 0; i < 3; i++) await sink.write(piece('b'));
  disk.fill();
  let failure: unknown;
  for (let i = 0; i < 80 && !failure; i++) await sink.write(piece('b')).catch((err: unknown) => (failure = err));
  expect(describeStorageError(failure)).toMatch(/^ENOSPC: .*No space left on device/);
  await sink.abort();
  expect(readdirSync(snapshotDir)).toEqual([expect.stringMatching(/-1-5\.snap$/)]);

  disk.free();
  expect(text((await storage.load()).snapshot!.data).slice(0, 1)).toBe('a');
  await storage.saveSnapshot(meta(9, 1), [piece('d'), piece('d'), piece('d')], Infinity);
  expect(readdirSync(snapshotDir)).toEqual([expect.stringMatching(/-1-9\.snap$/)]);
  const state = await storage.load();
  expect(state.snapshot?.meta.index).toBe(9);
  expect(state.snapshot!.data.length).toBe(3 * (64 << 10));
  expect(state.snapshot!.data.every((b) => b === 'd'.charCodeAt(0))).toBe(true);
  await storage.close();
  await db.close();
});
