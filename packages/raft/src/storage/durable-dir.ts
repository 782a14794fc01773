// Directories that are on the disk once made. mkdir puts a new name in the parent directory, and
// like any name it is durable only once the parent is fsynced: without that, a power cut after a
// first start can take the whole folder — the write-ahead log's, with every segment it held,
// although each segment was synced (issue 35, found by test/powercut in packages/server).
import { closeSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** fsync a directory: the names created, renamed or removed in it are then durable. */
export function syncDirSync(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * syncDirSync off the event loop: a folder's fsync waits for the disk to flush its cache, and behind
 * a large file's writeback that took ~200 ms (a restore's staged gigabyte, just renamed into place).
 */
export async function syncDir(dir: string): Promise<void> {
  const folder = await open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/** mkdir -p, with each directory it made fsynced into its parent. */
export function makeDirDurablySync(dir: string): void {
  const first = mkdirSync(dir, { recursive: true });
  if (!first) return;
  // `first` is the topmost directory made: sync the parent of each level from `dir` up to it.
  for (let d = resolve(dir); ; d = dirname(d)) {
    syncDirSync(dirname(d));
    if (d === resolve(first) || d === dirname(d)) break;
  }
}
