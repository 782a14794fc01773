// The data dir's folders for a backup's files in passing: an archive being uploaded for a restore
// (archive-upload.ts) and a state spooled for a save (snapshot-spool.ts). Their files are removed
// by whoever made them; what a server left there when it died mid-way is removed at its next start.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Under the data dir: restores' uploaded archives. */
export const UPLOAD_DIR = 'snapshot-uploads';
/** Under the data dir: saves' spooled states. */
export const SAVE_DIR = 'snapshot-saves';

/** Removes whatever an earlier run left in both folders (a crash mid-restore or mid-save). */
export async function clearScratchDirs(dataDir: string): Promise<void> {
  for (const folder of [UPLOAD_DIR, SAVE_DIR]) {
    const dir = join(dataDir, folder);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    await Promise.all(names.map((n) => rm(join(dir, n), { force: true })));
  }
}

/**
 * A new file's path in one of the folders (created if need be), named `<prefix>-<ms>-<random><ext>`,
 * and its removal: idempotent, never throws.
 */
export async function scratchFile(dataDir: string, folder: string, prefix: string, ext: string): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = join(dataDir, folder);
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${prefix}-${Date.now()}-${randomBytes(6).toString('hex')}${ext}`);
  let removed = false;
  const remove = async () => {
    if (removed) return;
    removed = true;
    await rm(path, { force: true }).catch(() => undefined);
  };
  return { path, remove };
}
