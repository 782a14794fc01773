// The storages the storage tests run each case against (MemoryStorage, LevelStorage and WalStorage,
// the latter two in a fresh folder removed after the file's tests), and a way to reopen what was written.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelStorage, MemoryStorage, WalStorage, type RaftStorage } from '@registry/raft';

/** A maker of fresh temporary folders named `prefix…`, all removed after the calling file's tests. */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
}

export interface StorageFactory {
  name: string;
  /** A fresh storage, and how to open again what it holds (LevelStorage: closed and opened anew; MemoryStorage: itself). */
  open: () => { storage: RaftStorage; reopen: () => Promise<RaftStorage> };
}

/** A WalStorage in `dir`: segments under wal/, snapshots in a LevelDB under snapshots/. */
export function walStorage(dir: string, segmentBytes?: number): WalStorage {
  return new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'snapshots') }), segmentBytes });
}

/** MemoryStorage, then LevelStorage and WalStorage in folders from `tempDir`. */
export function storageFactories(tempDir: () => string): StorageFactory[] {
  return [
    {
      name: 'MemoryStorage',
      open: () => {
        const storage = new MemoryStorage();
        return { storage, reopen: async () => storage };
      },
    },
    {
      name: 'LevelStorage',
      open: () => {
        const path = tempDir();
        const storage = new LevelStorage({ path });
        return {
          storage,
          reopen: async () => {
            await storage.close();
            return new LevelStorage({ path });
          },
        };
      },
    },
    {
      name: 'WalStorage',
      open: () => {
        const path = tempDir();
        // Small segments, so that the cases also cross segment boundaries.
        const storage = walStorage(path, 4096);
        return {
          storage,
          reopen: async () => {
            await storage.close();
            return walStorage(path, 4096);
          },
        };
      },
    },
  ];
}
