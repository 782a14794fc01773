import { Level } from 'level';
import { Packr } from 'msgpackr';
import { EntryType, LevelStorage, type Entry, type SnapshotMeta } from '@registry/raft';
import { storageFactories, tempDirs } from '../support/storages';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const entry = (index: number, term: number, data = `e${index}t${term}`): Entry => ({
  index,
  term,
  type: EntryType.Normal,
  data: bytes(data),
});
const range = (from: number, to: number, term: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => entry(from + i, term));
const summary = (entries: Entry[]) => entries.map((e) => `${e.index}:${e.term}:${text(e.data)}`);
const meta = (index: number, term: number): SnapshotMeta => ({
  index,
  term,
  configuration: { servers: [{ id: 'a', address: '127.0.0.1:1' }] },
});

const tempDir = tempDirs('raft-storage-');
const factories = storageFactories(tempDir);

describe.each(factories)('$name', ({ open }) => {
  test('an empty store loads a zero hard state, no snapshot and no entries', async () => {
    const { storage } = open();
    const state = await storage.load();
    expect(state).toEqual({ hardState: { term: 0, vote: null, commit: 0 }, snapshot: undefined, entries: [] });
    await storage.close();
  });

  test('appended entries and hard state load back in index order, bytes intact', async () => {
    const { storage } = open();
    await storage.load();
    await storage.append({ term: 2, vote: 'b', commit: 3 }, range(1, 5, 2));
    await storage.append(undefined, range(6, 300, 2));
    const state = await storage.load();
    expect(state.hardState).toEqual({ term: 2, vote: 'b', commit: 3 });
    expect(summary(state.entries)).toEqual(summary(range(1, 300, 2)));
    expect(state.entries[0].type).toBe(EntryType.Normal);
    await storage.close();
  });

  test('appending at an existing index replaces the conflicting suffix, including entries beyond the new tail', async () => {
    const { storage } = open();
    await storage.load();
    await storage.append({ term: 1, vote: 'a', commit: 0 }, range(1, 10, 1));
    await storage.append({ term: 3, vote: 'c', commit: 4 }, range(5, 6, 3));
    const state = await storage.load();
    expect(summary(state.entries)).toEqual(summary([...range(1, 4, 1), ...range(5, 6, 3)]));
    await storage.append(undefined, range(7, 8, 3));
    expect(summary((await storage.load()).entries)).toEqual(summary([...range(1, 4, 1), ...range(5, 8, 3)]));
    await storage.close();
  });

  test('a snapshot is stored and entries up to compactTo are dropped, trailing entries kept', async () => {
    const { storage } = open();
    await storage.load();
    await storage.append({ term: 1, vote: 'a', commit: 20 }, range(1, 20, 1));
    await storage.saveSnapshot(meta(15, 1), bytes('state@15'), 10);
    const state = await storage.load();
    expect(state.snapshot?.meta).toEqual(meta(15, 1));
    expect(text(state.snapshot!.data)).toBe('state@15');
    expect(summary(state.entries)).toEqual(summary(range(11, 20, 1)));
    // A later snapshot replaces the earlier one and compacts further.
    await storage.saveSnapshot(meta(20, 1), bytes('state@20'), 18);
    const later = await storage.load();
    expect(text(later.snapshot!.data)).toBe('state@20');
    expect(summary(later.entries)).toEqual(summary(range(19, 20, 1)));
    await storage.close();
  });

  test('an installed snapshot that disagrees with the log at its index discards the whole log', async () => {
    const { storage } = open();
    await storage.load();
    await storage.append({ term: 1, vote: 'a', commit: 5 }, range(1, 8, 1));
    await storage.saveSnapshot(meta(6, 2), bytes('leader state'), 6);
    expect((await storage.load()).entries).toEqual([]);
    await storage.append(undefined, range(7, 9, 2));
    expect(summary((await storage.load()).entries)).toEqual(summary(range(7, 9, 2)));
    await storage.close();
  });

  test('compacting to Infinity drops the whole log even where it agrees with the snapshot', async () => {
    const { storage } = open();
    await storage.load();
    await storage.append(undefined, range(1, 8, 1));
    await storage.saveSnapshot(meta(5, 1), bytes('installed'), Infinity);
    const state = await storage.load();
    expect(state.entries).toEqual([]);
    expect(text(state.snapshot!.data)).toBe('installed');
    await storage.close();
  });

  test('an installed snapshot beyond the end of the log leaves an empty log', async () => {
    const { storage } = open();
    await storage.load();
    await storage.append(undefined, range(1, 3, 1));
    await storage.saveSnapshot(meta(50, 4), bytes('s'), 50);
    expect((await storage.load()).entries).toEqual([]);
    await storage.close();
  });
});

describe('LevelStorage on disk', () => {
  test('everything written survives closing and reopening the database', async () => {
    const { storage, reopen } = factories[1].open();
    await storage.load();
    await storage.append({ term: 4, vote: 'x', commit: 30 }, range(1, 40, 4));
    await storage.saveSnapshot(meta(30, 4), bytes('snap'), 25);
    await storage.append(undefined, range(35, 36, 5));
    const again = await reopen();
    const state = await again.load();
    expect(state.hardState).toEqual({ term: 4, vote: 'x', commit: 30 });
    expect(state.snapshot?.meta).toEqual(meta(30, 4));
    expect(summary(state.entries)).toEqual(summary([...range(26, 34, 4), ...range(35, 36, 5)]));
    // The reopened store knows its bounds: a suffix overwrite still removes the old tail.
    await again.append(undefined, range(27, 27, 6));
    expect(summary((await again.load()).entries)).toEqual(summary([entry(26, 4), entry(27, 6)]));
    await again.close();
  });

  test('a hard state that only moves the commit index waits for the next batch, or close', async () => {
    // A shared database lets the test read what is on disk while the store stays open.
    const db = new Level<string, Uint8Array>(tempDir(), { valueEncoding: 'view' });
    const onDisk = async () => (await new LevelStorage({ db, prefix: 'raft' }).load()).hardState;
    const storage = new LevelStorage({ db, prefix: 'raft' });
    await storage.load();
    await storage.append({ term: 2, vote: 'a', commit: 0 }, range(1, 3, 2));
    await storage.append({ term: 2, vote: 'a', commit: 2 }, []);
    expect(await onDisk()).toEqual({ term: 2, vote: 'a', commit: 0 });
    await storage.append(undefined, range(4, 4, 2));
    expect(await onDisk()).toEqual({ term: 2, vote: 'a', commit: 2 });
    // A new term or vote is written (and synced) at once, entries or not.
    await storage.append({ term: 3, vote: null, commit: 2 }, []);
    expect(await onDisk()).toEqual({ term: 3, vote: null, commit: 2 });
    await storage.append({ term: 3, vote: null, commit: 4 }, []);
    await storage.close();
    expect(await onDisk()).toEqual({ term: 3, vote: null, commit: 4 });
    await db.close();
  });

  test('a log written one value per entry (the older layout) loads, and later writes build on it', async () => {
    const db = new Level<string, Uint8Array>(tempDir(), { valueEncoding: 'view' });
    const raw = db.sublevel<string, Uint8Array>('raft', { keyEncoding: 'utf8', valueEncoding: 'view' });
    const packr = new Packr({ useRecords: false });
    for (const e of range(1, 5, 2)) {
      await raw.put(`log!${e.index.toString(16).padStart(14, '0')}`, packr.pack([e.term, e.type, e.data]));
    }
    const storage = new LevelStorage({ db, prefix: 'raft' });
    expect(summary((await storage.load()).entries)).toEqual(summary(range(1, 5, 2)));
    await storage.append(undefined, range(4, 6, 3)); // overwrites inside the migrated entries
    await storage.saveSnapshot(meta(4, 3), bytes('s'), 2);
    await storage.close();
    const again = new LevelStorage({ db, prefix: 'raft' });
    expect(summary((await again.load()).entries)).toEqual(summary([entry(3, 2), ...range(4, 6, 3)]));
    await again.close();
    await db.close();
  });

  test('blocks a compaction dropped are dead at once: a crash before their range delete loses and resurrects nothing', async () => {
    const db = new Level<string, Uint8Array>(tempDir(), { valueEncoding: 'view' });
    const raw = db.sublevel<string, Uint8Array>('raft', { keyEncoding: 'utf8', valueEncoding: 'view' });
    const packr = new Packr({ useRecords: false });
    const hex = (n: number) => n.toString(16).padStart(14, '0');
    const blockKeys = async () => {
      const keys: string[] = [];
      for await (const key of raw.keys({ gt: 'blk!', lt: 'blk~' })) keys.push(key);
      return keys;
    };
    const storage = new LevelStorage({ db, prefix: 'raft' });
    await storage.load();
    // One block per append, as a server writing one entry at a time leaves them.
    for (let i = 1; i <= 40; i++) await storage.append(undefined, [entry(i, 1)]);
    await storage.saveSnapshot(meta(30, 1), bytes('snap'), 25);
    await storage.close();
    // What a crash between the snapshot's batch and the range delete leaves: the dropped blocks.
    for (let i = 1; i <= 25; i++) await raw.put(`blk!${hex(i)}${hex(i)}`, packr.pack([[1, EntryType.Normal, bytes(`stale ${i}`)]]));
    const again = new LevelStorage({ db, prefix: 'raft' });
    expect(summary((await again.load()).entries)).toEqual(summary(range(26, 40, 1)));
    // Opening removed them again (off the main thread).
    for (let t = 0; (await blockKeys()).length !== 15 && t < 100; t++) await new Promise((r) => setTimeout(r, 20));
    expect(await blockKeys()).toHaveLength(15);
    // A log discarded whole by an installed snapshot: the floor moves above it, and what follows loads.
    for (let i = 1; i <= 25; i++) await raw.put(`blk!${hex(i)}${hex(i)}`, packr.pack([[1, EntryType.Normal, bytes(`stale ${i}`)]]));
    await again.saveSnapshot(meta(50, 2), bytes('installed'), Infinity);
    await again.append(undefined, range(51, 52, 2));
    await again.close();
    const third = new LevelStorage({ db, prefix: 'raft' });
    const state = await third.load();
    expect(state.snapshot?.meta).toEqual(meta(50, 2));
    expect(summary(state.entries)).toEqual(summary(range(51, 52, 2)));
    await third.close();
    await db.close();
  });

  test('a store inside a shared database keeps to its prefix and leaves the database open', async () => {
    const db = new Level<string, string>(tempDir());
    await db.put('node-id', 'abc');
    const storage = new LevelStorage({ db, prefix: 'raft' });
    await storage.load();
    await storage.append({ term: 1, vote: null, commit: 0 }, range(1, 3, 1));
    await storage.close();
    expect(await db.get('node-id')).toBe('abc');
    const reopened = new LevelStorage({ db, prefix: 'raft' });
    expect(summary((await reopened.load()).entries)).toEqual(summary(range(1, 3, 1)));
    await db.close();
  });
});
