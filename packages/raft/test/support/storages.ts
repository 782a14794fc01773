// The storages the storage tests run each case against (MemoryStorage and LevelStorage, the latter
// in a fresh folder removed after the file's tests), and a way to reopen what was written.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelStorage, MemoryStorage, type RaftStorage } from '@registry/raft';

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

/** MemoryStorage, then LevelStorage in a folder from `tempDir`. */
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
  ];
}
