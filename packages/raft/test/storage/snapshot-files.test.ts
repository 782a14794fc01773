// Snapshots as files (issue #34, file-snapshots.ts), for LevelStorage and WalStorage alike:
// - the data dir does not grow with the number of snapshots taken (one file, replaced; nothing left
//   in LevelDB for its compactor to chase — it used to keep every replaced snapshot's pieces until
//   a compaction reached them);
// - the previous snapshot is removed only once the new one is durable: a crash before the new one's
//   rename leaves the previous one, a crash after it leaves the new one, and SIGKILLs at random
//   points while snapshots are taken always leave a store that loads a whole snapshot;
// - a store of data format 1 (snapshot pieces in LevelDB, written by that commit's LevelStorage) has
//   its snapshot moved into a file when it opens, once — also when a crash came in the middle.
import { spawn } from 'node:child_process';
import { closeSync, cpSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { EntryType, FileSnapshots, LevelStorage, WalStorage, type Entry, type RaftStorage, type SnapshotMeta } from '@registry/raft';
import { Format1LevelStorage } from '../support/format1-level-storage';
import { tempDirs } from '../support/storages';

jest.setTimeout(120_000);

const tempDir = tempDirs('raft-snapshot-files-');
const meta = (index: number, term = 1): SnapshotMeta => ({ index, term, configuration: { servers: [{ id: 'a', address: '127.0.0.1:1' }] } });
const entry = (index: number, term = 1): Entry => ({ index, term, type: EntryType.Normal, data: Buffer.from(`e${index}`) });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => entry(from + i));

/** Bytes of every file under `dir`. */
function du(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    total += e.isDirectory() ? du(path) : statSync(path).size;
  }
  return total;
}

interface Kind {
  name: string;
  open(dir: string): RaftStorage;
}
const kinds: Kind[] = [
  { name: 'LevelStorage', open: (dir) => new LevelStorage({ path: join(dir, 'db') }) },
  { name: 'WalStorage', open: (dir) => new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'db') }), segmentBytes: 64 << 10 }) },
];

describe.each(kinds)('$name', ({ name, open }) => {
  test('ten snapshots of the same state take the room of one: the data dir does not grow with their number', async () => {
    const dir = tempDir();
    const storage = open(dir);
    await storage.load();
    const SIZE = 4 << 20;
    const piece = Buffer.alloc(256 << 10, 0x5a);
    let index = 0;
    const sizes: number[] = [];
    for (let n = 0; n < 10; n++) {
      await storage.append({ term: 1, vote: 'a', commit: index + 10 }, range(index + 1, index + 10));
      index += 10;
      const sink = storage.createSnapshot!(meta(index), index - 2);
      for (let at = 0; at < SIZE; at += piece.length) await sink.write(piece);
      await sink.commit();
      sizes.push(du(dir));
    }
    await storage.close();
    const snapshots = readdirSync(join(dir, 'db', 'snapshots'));
    expect(snapshots).toHaveLength(1);
    expect(statSync(join(dir, 'db', 'snapshots', snapshots[0])).size).toBeLessThan(SIZE + 4096);
    // Everything — the snapshot file, LevelDB, the WAL's preallocated segments — within one snapshot and 1.5 MiB.
    expect(Math.max(...sizes)).toBeLessThan(SIZE + (3 << 19));
    expect(sizes[9]).toBeLessThanOrEqual(sizes[0] + (64 << 10));
    const again = open(dir);
    const state = await again.load();
    expect(state.snapshot!.meta.index).toBe(100);
    expect(state.snapshot!.data.length).toBe(SIZE);
    expect(state.entries.map((e) => e.index)).toEqual([99, 100]);
    await again.close();
  });

  test('SIGKILL at random points while snapshots are taken: the store always loads a whole snapshot and the log after it', async () => {
    const dir = tempDir();
    const kills = 8;
    for (let k = 0; k < kills; k++) {
      const child = spawn(process.execPath, [join(__dirname, 'snapshot-files-child.js'), name === 'WalStorage' ? 'wal' : 'level', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
      const wanted = 1 + (k % 3);
      let out = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`child made no snapshots: ${out}`)), 60_000);
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if ((out.match(/snap \d+/g) ?? []).length >= wanted) {
            clearTimeout(timer);
            // Somewhere inside the next snapshot: writing, syncing, renaming, compacting, removing.
            setTimeout(resolve, Math.floor(Math.random() * 60));
          }
        });
        child.on('exit', (code) => reject(new Error(`child exited early (${code}): ${out}`)));
      });
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const lastCommitted = Math.max(...[...out.matchAll(/snap (\d+)/g)].map((m) => Number(m[1])));

      const storage = open(dir);
      const state = await storage.load();
      const snap = state.snapshot!;
      // The last one it reported, or the one after it (killed after its rename), never older.
      expect(snap.meta.index).toBeGreaterThanOrEqual(lastCommitted);
      expect(snap.data.length).toBe(3 << 20);
      expect(snap.data.every((b) => b === snap.meta.index % 251)).toBe(true);
      const indexes = state.entries.map((e) => e.index).filter((i) => i > snap.meta.index);
      expect(indexes).toEqual(indexes.length ? range(snap.meta.index + 1, indexes[indexes.length - 1]).map((e) => e.index) : []);
      await storage.close();
      expect(readdirSync(join(dir, 'db', 'snapshots'))).toHaveLength(1);
    }
  });
});

describe('FileSnapshots: the previous snapshot goes only once the new one is durable', () => {
  const write = async (files: FileSnapshots, index: number, fill: number) => {
    const w = files.create(meta(index));
    await w.write(Buffer.alloc(1000, fill));
    await w.finish();
    return w;
  };

  test('a crash before the new one is renamed into place leaves the previous one; its temporary file is removed', async () => {
    const dir = tempDir();
    const files = new FileSnapshots(dir);
    files.open();
    await files.install(await write(files, 5, 1));
    await write(files, 9, 2); // finished, synced, not installed: the crash comes here
    expect(readdirSync(dir)).toHaveLength(2);
    const after = new FileSnapshots(dir);
    after.open();
    expect(after.latest!.meta.index).toBe(5);
    expect((await after.readAll())!.data.every((b) => b === 1)).toBe(true);
    expect(readdirSync(dir)).toHaveLength(1);
  });

  test('a crash after the rename, before the previous one is removed, leaves the new one; the previous goes on open', async () => {
    const dir = tempDir();
    const files = new FileSnapshots(dir);
    files.open();
    await files.install(await write(files, 5, 1));
    await files.install(await write(files, 9, 2)); // removeOlder() never runs: the crash comes here
    expect(readdirSync(dir)).toHaveLength(2);
    const after = new FileSnapshots(dir);
    after.open();
    expect(after.latest!.meta.index).toBe(9);
    expect((await after.readAll())!.data.every((b) => b === 2)).toBe(true);
    expect(readdirSync(dir)).toHaveLength(1);
  });

  test('the newest installed wins, whatever its index (a leader\'s snapshot installed while an older one of ours was written)', async () => {
    const dir = tempDir();
    const files = new FileSnapshots(dir);
    files.open();
    const ours = await write(files, 5, 1);
    await files.install(await write(files, 9, 2));
    await files.install(ours);
    const after = new FileSnapshots(dir);
    after.open();
    expect(after.latest!.meta.index).toBe(5);
  });

  test('pieces given back are read into again (a send allocates no buffer per piece), each still holding its own bytes', async () => {
    const dir = tempDir();
    const files = new FileSnapshots(dir);
    files.open();
    const PIECE = 64 << 10;
    const w = files.create(meta(7));
    // 40 MiB: past the writer's periodic sync (32 MiB), which runs beside the writes that follow it.
    for (let i = 0; i < 640; i++) await w.write(Buffer.alloc(PIECE, i % 251));
    await w.finish();
    await files.install(w);
    const reader = (await files.read(PIECE))!;
    const seen = new Set<ArrayBufferLike>();
    let fresh = 0;
    for (let i = 0; i < reader.chunks; i++) {
      const piece = await reader.read(i);
      expect(piece.length).toBe(PIECE);
      expect(piece[0]).toBe(i % 251);
      expect(piece[PIECE - 1]).toBe(i % 251);
      if (!seen.has(piece.buffer)) fresh++;
      seen.add(piece.buffer);
      reader.release!(piece);
    }
    reader.close();
    // The one read ahead and the one in hand; the rest reuse them (the CRC was checked at the end).
    expect(fresh).toBeLessThanOrEqual(3);
  });

  test('a file whose bytes were damaged fails its CRC when read through', async () => {
    const dir = tempDir();
    const files = new FileSnapshots(dir);
    files.open();
    await files.install(await write(files, 5, 1));
    const name = readdirSync(dir)[0];
    const fd = openSync(join(dir, name), 'r+');
    writeSync(fd, Buffer.from([9]), 0, 1, files.latest!.offset + 10);
    closeSync(fd);
    await expect(files.readAll()).rejects.toThrow(/CRC/);
  });

  test('readRange() reads the bytes into memory the caller gives, in order only, and checks the CRC at the end', async () => {
    const dir = tempDir();
    const files = new FileSnapshots(dir);
    files.open();
    const w = files.create(meta(5));
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31) & 255));
    await w.write(bytes);
    await w.finish();
    await files.install(w);

    const reader = (await files.read())!;
    const into = [Buffer.alloc(100_000), Buffer.alloc(150_000), Buffer.alloc(50_000)];
    let at = 0;
    for (const b of into) {
      await reader.readRange!(at, b);
      at += b.length;
    }
    reader.close();
    expect(Buffer.concat(into).equals(bytes)).toBe(true);

    // Out of order, twice over, or past the end: refused.
    const again = (await files.read())!;
    await expect(again.readRange!(10, Buffer.alloc(5))).rejects.toThrow(/out of order/);
    await again.readRange!(0, Buffer.alloc(5));
    await expect(again.readRange!(0, Buffer.alloc(5))).rejects.toThrow(/out of order/);
    await expect(again.readRange!(5, Buffer.alloc(300_000))).rejects.toThrow(/out of order/);
    again.close();

    // Damaged bytes: the last range read fails its CRC.
    const fd = openSync(join(dir, readdirSync(dir)[0]), 'r+');
    writeSync(fd, Buffer.from([(bytes[200_000] + 1) & 255]), 0, 1, files.latest!.offset + 200_000);
    closeSync(fd);
    const damaged = (await files.read())!;
    await damaged.readRange!(0, Buffer.alloc(150_000));
    await expect(damaged.readRange!(150_000, Buffer.alloc(150_000))).rejects.toThrow(/CRC/);
    damaged.close();
  });
});

describe('data format 1: a snapshot kept in LevelDB is moved into a file when the store opens', () => {
  /** A LevelDB as that commit's LevelStorage wrote it: a log, a hard state and a snapshot in pieces. */
  async function format1(path: string): Promise<void> {
    const old = new Format1LevelStorage({ path });
    await old.load();
    await old.append({ term: 2, vote: 'a', commit: 40 }, range(1, 40).map((e) => ({ ...e, term: 2 })));
    await old.saveSnapshot(meta(30, 2), [Buffer.alloc(70_000, 7), Buffer.alloc(70_000, 8), Buffer.from('end')], 25);
    await old.close();
  }

  async function levelKeys(path: string): Promise<string[]> {
    const db = new Level<string, Uint8Array>(path, { keyEncoding: 'utf8', valueEncoding: 'view' });
    const keys: string[] = [];
    for await (const key of db.keys()) keys.push(key);
    await db.close();
    return keys;
  }

  const check = (state: Awaited<ReturnType<RaftStorage['load']>>) => {
    expect(state.snapshot!.meta).toEqual(meta(30, 2));
    expect(state.snapshot!.data.length).toBe(140_003);
    expect(state.snapshot!.data[69_999]).toBe(7);
    expect(state.snapshot!.data[70_000]).toBe(8);
    expect(Buffer.from(state.snapshot!.data.subarray(140_000)).toString()).toBe('end');
    expect(state.hardState).toEqual({ term: 2, vote: 'a', commit: 40 });
    expect(state.entries.map((e) => e.index)).toEqual(range(26, 40).map((e) => e.index));
  };

  test('LevelStorage: loads as before, the snapshot is a file, LevelDB keeps no piece of it; later snapshots work', async () => {
    const path = join(tempDir(), 'db');
    await format1(path);
    expect((await levelKeys(path)).filter((k) => k.startsWith('snc!'))).toHaveLength(3);
    const storage = new LevelStorage({ path });
    check(await storage.load());
    await storage.close();
    expect((await levelKeys(path)).filter((k) => k.startsWith('snc!') || k.startsWith('snapshot'))).toEqual([]);
    expect(readdirSync(join(path, 'snapshots'))).toHaveLength(1);

    const again = new LevelStorage({ path });
    check(await again.load());
    await again.saveSnapshot(meta(38, 2), Buffer.from('newer'), 35);
    await again.close();
    const later = await new LevelStorage({ path }).load();
    expect(later.snapshot!.meta.index).toBe(38);
    expect(later.entries.map((e) => e.index)).toEqual([36, 37, 38, 39, 40]);
  });

  test('a crash after the file was installed and before LevelDB let go of the pieces: the next open finishes, with one file', async () => {
    const dir = tempDir();
    const path = join(dir, 'db');
    await format1(path);
    cpSync(path, join(dir, 'before'), { recursive: true });
    const storage = new LevelStorage({ path });
    await storage.load();
    await storage.close();
    // LevelDB as it was before the migration's batch, beside the file the migration installed.
    const files = join(dir, 'files');
    cpSync(join(path, 'snapshots'), files, { recursive: true });
    rmSync(path, { recursive: true });
    cpSync(join(dir, 'before'), path, { recursive: true });
    cpSync(files, join(path, 'snapshots'), { recursive: true });
    const again = new LevelStorage({ path });
    check(await again.load());
    await again.close();
    expect(readdirSync(join(path, 'snapshots'))).toHaveLength(1);
    expect((await levelKeys(path)).filter((k) => k.startsWith('snc!') || k.startsWith('snapshot'))).toEqual([]);
  });

  test('WalStorage: the log moves into the WAL and the snapshot into a file, on the same first open', async () => {
    const dir = tempDir();
    await format1(join(dir, 'db'));
    const wal = () => new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'db') }) });
    const storage = wal();
    check(await storage.load());
    await storage.close();
    expect((await levelKeys(join(dir, 'db'))).filter((k) => k.startsWith('snc!') || k.startsWith('snapshot') || k.startsWith('blk!'))).toEqual([]);
    const again = wal();
    check(await again.load());
    await again.close();
  });
});
