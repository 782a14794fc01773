// While this process writes a large file — a snapshot here, a restore's staged state in the server —
// the write-ahead log writes every record through libuv's pool, not on the event loop, until a few
// seconds after the file's last piece or sync (issue #34; src/storage/bulk-writes.ts says why: a synced
// write on the event loop waited ~280 ms behind the disk's writeback). The pool/inline split is seen
// by which of node:fs's calls the log makes, as in inline-writes.test.ts.
import { join } from 'node:path';
import { EntryType, FileSnapshots, LevelStorage, WalStorage, duringBulkSync, type Entry, type SnapshotMeta } from '@registry/raft';
import { tempDirs } from '../support/storages';
import { writesBy } from '../support/wal-writes';

const tempDir = tempDirs('raft-bulk-');
const entry = (index: number, size: number): Entry => ({ index, term: 1, type: EntryType.Normal, data: new Uint8Array(size).fill(7) });
const meta = (index: number): SnapshotMeta => ({ index, term: 1, configuration: { servers: [{ id: 'a', address: '127.0.0.1:1' }] } });
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));


test('a snapshot file being written sends the log to the pool, until 5 s after its sync', async () => {
  const dir = tempDir();
  const storage = new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'snapshots') }), inlineWrites: { maxBytes: 4096, slowMs: 10_000, poolForMs: 10_000 } });
  await storage.load();
  await storage.append({ term: 1, vote: 'a', commit: 0 }, [entry(1, 10)]);
  expect(await writesBy(() => storage.append(undefined, [entry(2, 100)]))).toEqual({ inline: 1, pool: 0 });

  const files = new FileSnapshots(join(dir, 'snap'));
  files.open();
  const w = files.create(meta(2));
  await w.write(Buffer.alloc(1 << 20, 1));
  expect(await writesBy(() => storage.append(undefined, [entry(3, 100)]))).toEqual({ inline: 0, pool: 1 });
  await w.finish();
  expect(await writesBy(() => storage.append(undefined, [entry(4, 100)]))).toEqual({ inline: 0, pool: 1 });

  // Inline again once the disk had time to take what the file left dirty.
  await wait(5_500);
  expect(await writesBy(() => storage.append(undefined, [entry(5, 100)]))).toEqual({ inline: 1, pool: 0 });
  await storage.close();
}, 30_000);

test('a bulk sync that runs longer than the settling time keeps the log on the pool throughout', async () => {
  const dir = tempDir();
  const storage = new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'snapshots') }), inlineWrites: { maxBytes: 4096, slowMs: 10_000, poolForMs: 10_000 } });
  await storage.load();
  await storage.append({ term: 1, vote: 'a', commit: 0 }, [entry(1, 10)]);
  await wait(5_500); // past the first test's settling
  let release!: () => void;
  const sync = duringBulkSync(() => new Promise<void>((r) => (release = r)));
  await wait(5_500);
  expect(await writesBy(() => storage.append(undefined, [entry(2, 100)]))).toEqual({ inline: 0, pool: 1 });
  release();
  await sync;
  expect(await writesBy(() => storage.append(undefined, [entry(3, 100)]))).toEqual({ inline: 0, pool: 1 });
  await storage.close();
}, 30_000);
