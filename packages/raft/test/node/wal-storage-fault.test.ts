// WalStorage on a real full disk (a small tmpfs): a record that could not be written is cut back
// off the segment, the same write retried after space is freed succeeds, and everything
// acknowledged — before, and after, the failure — loads back after a reopen.
import { describeStorageError, EntryType, type Entry } from '@registry/raft';
import { join } from 'node:path';
import { bytes, text } from './cluster-harness';
import { walStorage } from '../support/storages';
import { Tmpfs } from '../support/tmpfs';

const disk = Tmpfs.mount('raft-wal-enospc-', 3);
afterEach(() => disk.free());
afterAll(() => disk.unmount());

const entry = (index: number, term = 1): Entry => ({ index, term, type: EntryType.Normal, data: bytes(`${index}:`.padEnd(16 << 10, 'x')) });

test('WalStorage: a write that failed on a full disk succeeds when retried after space is freed, and stays durable', async () => {
  if (!disk.mounted) return console.warn(disk.skipReason);
  const dir = join(disk.dir, 'store');
  // Segments of 64 KiB: the failures also hit a roll (a new file) as well as plain appends.
  let storage = walStorage(dir, 64 << 10);
  await storage.load();
  await storage.append({ term: 1, vote: 'a', commit: 0 }, [entry(1), entry(2)]);

  disk.fill();
  let index = 3;
  let failure: Error | undefined;
  for (; index < 50 && !failure; index++) {
    await storage.append({ term: 1, vote: 'a', commit: index - 1 }, [entry(index)]).catch((err: Error) => (failure = err));
  }
  index--; // the one that failed
  expect(describeStorageError(failure)).toMatch(/^ENOSPC: No space left on device/);
  const again = await storage.append({ term: 2, vote: 'b', commit: index - 1 }, [entry(index, 2)]).catch((err: Error) => err);
  expect(describeStorageError(again)).toMatch(/^ENOSPC: No space left on device/);

  disk.free();
  await storage.append({ term: 2, vote: 'b', commit: index - 1 }, [entry(index, 2)]);
  for (let i = 1; i <= 6; i++) await storage.append(undefined, [entry(index + i, 2)]);
  await storage.close();

  storage = walStorage(dir, 64 << 10);
  const loaded = await storage.load();
  await storage.close();
  expect(loaded.hardState).toEqual({ term: 2, vote: 'b', commit: index - 1 });
  expect(loaded.entries.map((e) => `${e.index}:${e.term}`)).toEqual(
    Array.from({ length: index + 6 }, (_, i) => `${i + 1}:${i + 1 >= index ? 2 : 1}`),
  );
  expect(text(loaded.entries.at(-1)!.data).startsWith(`${index + 6}:`)).toBe(true);
});
