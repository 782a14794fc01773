// Each on-disk storage on a real full disk (a small tmpfs mounted for the test): a write that
// failed is retried, fails again while the disk stays full, succeeds once space is freed, and
// everything acknowledged — before and after the failure — loads back after a reopen. LevelDB
// must be reopened before it is written again after a failed write (else a later synced batch can
// vanish when its log is replayed); the WAL cuts the failed record back off its segment.
import { join } from 'node:path';
import { describeStorageError, EntryType, LevelStorage, type Entry, type RaftStorage } from '@registry/raft';
import { bytes, text } from './cluster-harness';
import { walStorage } from '../support/storages';
import { Tmpfs } from '../support/tmpfs';

const disk = Tmpfs.mount('raft-store-enospc-', 3);
// The filler of the running test is removed after it whatever happens.
afterEach(() => disk.free());
afterAll(() => disk.unmount());

// Entries of 16 KiB: each write needs new pages, which a full tmpfs cannot give.
const entry = (index: number, term = 1): Entry => ({ index, term, type: EntryType.Normal, data: bytes(`${index}:`.padEnd(16 << 10, 'x')) });

interface Case {
  name: string;
  open(dir: string): RaftStorage;
  /** How the failure reads: LevelDB puts its own words between the errno and strerror's text. */
  cause: RegExp;
  /** Appends after the retried one before the reopen. */
  after: number;
}

const cases: Case[] = [
  { name: 'LevelStorage', open: (dir) => new LevelStorage({ path: dir }), cause: /^ENOSPC: .*No space left on device/, after: 1 },
  // Segments of 64 KiB: the failures also hit a roll (a new file) as well as plain appends.
  { name: 'WalStorage', open: (dir) => walStorage(dir, 64 << 10), cause: /^ENOSPC: No space left on device/, after: 6 },
];

test.each(cases)('$name: a write that failed on a full disk succeeds when retried after space is freed, and stays durable', async (c) => {
  if (!disk.mounted) return console.warn(disk.skipReason);
  const dir = join(disk.dir, c.name);
  let storage = c.open(dir);
  await storage.load();
  await storage.append({ term: 1, vote: 'a', commit: 0 }, [entry(1), entry(2)]);

  disk.fill();
  let index = 3;
  let failure: Error | undefined;
  for (; index < 50 && !failure; index++) {
    await storage.append({ term: 1, vote: 'a', commit: index - 1 }, [entry(index)]).catch((err: Error) => (failure = err));
  }
  index--; // the one that failed
  expect(describeStorageError(failure)).toMatch(c.cause);
  // Still full: the retry fails too.
  const again = await storage.append({ term: 2, vote: 'b', commit: index - 1 }, [entry(index, 2)]).catch((err: Error) => err);
  expect(describeStorageError(again)).toMatch(c.cause);

  disk.free();
  // The same write, retried: it succeeds and so do the next ones.
  await storage.append({ term: 2, vote: 'b', commit: index - 1 }, [entry(index, 2)]);
  for (let i = 1; i <= c.after; i++) await storage.append(undefined, [entry(index + i, 2)]);
  await storage.close();

  storage = c.open(dir);
  const loaded = await storage.load();
  await storage.close();
  expect(loaded.hardState).toEqual({ term: 2, vote: 'b', commit: index - 1 });
  expect(loaded.entries.map((e) => `${e.index}:${e.term}`)).toEqual(
    Array.from({ length: index + c.after }, (_, i) => `${i + 1}:${i + 1 >= index ? 2 : 1}`),
  );
  expect(text(loaded.entries.at(-1)!.data).startsWith(`${index + c.after}:`)).toBe(true);
});
