// Files the agent needs to be itself after a restart (its node id, its own services and checks,
// persisted tokens, the left marker) are written so that a power cut leaves either the old file or
// the new one, never an empty or missing one (issue 35): the content goes to a temporary file,
// which is fsynced, renamed over the old one, and then the directory is fsynced so the rename
// itself is on disk. A removal fsyncs the directory too, so a deleted definition stays deleted.
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { makeDirDurablySync, syncDir, syncDirSync } from '@registry/raft';

/** fsync a directory, making the entries created, renamed or removed in it durable (off the event loop). */
export { syncDir };

/** The temporary name a durable write uses beside `path` (readers skip it). */
export const tempPathOf = (path: string) => `${path}.tmp`;

/** mkdir -p, with each directory it made fsynced into its parent. */
export async function makeDirDurably(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true });
  if (!first) return;
  // `first` is the topmost directory made: sync the parent of each level from it down to `dir`.
  for (let d = resolve(dir); ; d = dirname(d)) {
    await syncDir(dirname(d));
    if (d === resolve(first) || d === dirname(d)) break;
  }
}

/** Replace `path` with `data`: temp file, fsync, rename, fsync of the directory. */
export async function writeFileDurably(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const tmp = tempPathOf(path);
  const fh = await open(tmp, 'w', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  await syncDir(dirname(path));
}

/** Remove `path` (if there) and fsync its directory. */
export async function removeFileDurably(path: string): Promise<void> {
  await rm(path, { force: true });
  try {
    await syncDir(dirname(path));
  } catch (err) {
    // No directory: there was nothing to remove.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** writeFileDurably for the few places that must write before going on synchronously. */
export function writeFileDurablySync(path: string, data: string | Uint8Array, mode = 0o600): void {
  makeDirDurablySync(dirname(path));
  const tmp = tempPathOf(path);
  const fd = openSync(tmp, 'w', mode);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  syncDirSync(dirname(path));
}
