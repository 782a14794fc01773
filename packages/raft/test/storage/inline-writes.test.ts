// WalStorage writes a small record on the event loop and a large one (or a small one right after a
// large one) through libuv's pool, and after a slow write it sends every record through the pool for
// a while (issue #30;
// src/storage/wal/inline-writes.ts says why).
import { join } from 'node:path';
import { EntryType, LevelStorage, WalStorage, type Entry, type InlineWriteLimits } from '@registry/raft';
import { tempDirs } from '../support/storages';
import { writesBy } from '../support/wal-writes';

const tempDir = tempDirs('raft-inline-');
const entry = (index: number, size: number): Entry => ({ index, term: 1, type: EntryType.Normal, data: new Uint8Array(size).fill(7) });

const walIn = (dir: string, limits?: InlineWriteLimits) =>
  new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'snapshots') }), inlineWrites: limits });

async function opened(limits: InlineWriteLimits, dir = tempDir()): Promise<WalStorage> {
  const storage = walIn(dir, limits);
  await storage.load();
  await storage.append({ term: 1, vote: 'a', commit: 0 }, [entry(1, 10)]);
  return storage;
}

/** Whether `write` finished before the event loop turned (an immediate queued first has not run). */
async function withinTheTurn(write: () => Promise<void>): Promise<boolean> {
  let turned = false;
  setImmediate(() => (turned = true));
  await write();
  return !turned;
}


test('a small record is written on the event loop: the append is durable before the loop turns', async () => {
  const dir = tempDir();
  const storage = await opened({ maxBytes: 4096, slowMs: 10_000, poolForMs: 10_000 }, dir);
  for (let i = 2; i < 12; i++) expect(await withinTheTurn(() => storage.append(undefined, [entry(i, 100)]))).toBe(true);
  expect(await writesBy(() => storage.append(undefined, [entry(12, 100)]))).toEqual({ inline: 1, pool: 0 });
  await storage.close();
  const reopened = walIn(dir);
  expect((await reopened.load()).entries.map((e) => e.index)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  await reopened.close();
});

test('a record larger than maxBytes goes through the pool, and so does a small one right after it', async () => {
  const storage = await opened({ maxBytes: 4096, slowMs: 10_000, poolForMs: 10_000 });
  expect(await writesBy(() => storage.append(undefined, [entry(2, 8192)]))).toEqual({ inline: 0, pool: 1 });
  expect(await writesBy(() => storage.append(undefined, [entry(3, 100)]))).toEqual({ inline: 0, pool: 1 });
  expect(await writesBy(() => storage.append(undefined, [entry(4, 100)]))).toEqual({ inline: 1, pool: 0 });
  await storage.close();
});

test('after a write slower than slowMs, small records go through the pool for poolForMs', async () => {
  // Every write takes more than 0 ms: the first inline one is "slow", and sends the next to the pool.
  const storage = await opened({ maxBytes: 4096, slowMs: 0, poolForMs: 60_000 });
  expect(await writesBy(() => storage.append(undefined, [entry(2, 100)]))).toEqual({ inline: 0, pool: 1 });
  expect(await writesBy(() => storage.append(undefined, [entry(3, 100)]))).toEqual({ inline: 0, pool: 1 });
  await storage.close();
});

test('maxBytes 0 writes every record through the pool', async () => {
  const storage = await opened({ maxBytes: 0, slowMs: 10_000, poolForMs: 10_000 });
  expect(await writesBy(() => storage.append(undefined, [entry(2, 1)]))).toEqual({ inline: 0, pool: 1 });
  await storage.close();
});
