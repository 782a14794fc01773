// A state saved for a backup (GET /v1/snapshot) goes to a file in the data dir, not to memory. The
// store serialises it a piece at a time (persistTo, as Raft's own snapshots), each piece hashed and
// written as it comes, so the archive can name the state's size and SHA-256 in meta.json, its first
// member, and then be made from the file as it is sent (archive.ts archiveStream). Made in memory,
// a save of 192 MiB took the leader from 341 to 1,105 MiB and held its loop 430 ms at a time (issue
// #34). The file is removed once the archive is sent or abandoned; files a server left when it died
// mid-save are removed at its next start (scratch-dirs.ts).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Store } from '@registry/store';
import type { ArchiveSource } from './archive';
import { writeFully } from './file-io';
import { SAVE_DIR, scratchFile } from './scratch-dirs';

/** The spooled state as archiveStream() reads it (its bytes from the file), and where it stands. */
export interface SpooledState extends ArchiveSource {
  /** Raft index the state is the state of, and the term of the entry there. */
  index: number;
  term: number;
  /** Removes the file (idempotent; never throws). */
  remove(): Promise<void>;
}

/** Serialises the store's state as of now into a new file under `<dataDir>/snapshot-saves`. */
export async function spoolSnapshot(store: Store, dataDir: string, termAt: (index: number) => number): Promise<SpooledState> {
  const { path, remove } = await scratchFile(dataDir, SAVE_DIR, 'save', '.bin');
  const file = await open(path, 'wx');
  const handle = store.openSnapshot();
  const hash = createHash('sha256');
  let size = 0;
  try {
    // No fsync: the file is read back at once and then removed; a crash leaves it to clearScratchDirs.
    await handle.persistTo({
      async write(piece) {
        hash.update(piece);
        size += piece.length;
        await writeFully(file, piece);
      },
    });
  } catch (err) {
    await file.close().catch(() => undefined);
    await remove();
    throw err;
  } finally {
    handle.release();
  }
  await file.close();
  return { index: handle.index, term: termAt(handle.index), size, sha256: hash.digest('hex'), open: () => createReadStream(path, { highWaterMark: 1 << 20 }), remove };
}
