// Whole reads and writes on a file handle: a FileHandle's read and write may move fewer bytes than
// asked, and every backup file (a save's spool, a restore's state, a staged copy) needs all of them.
// Each of those files is a bulk write: while one is written, and synced, the Raft log writes off the
// event loop (raft storage/bulk-writes.ts says why).
import type { FileHandle } from 'node:fs/promises';
import { duringBulkSync, noteBulkWrite } from '@registry/raft';

/** All of `data` written at the handle's position. */
export async function writeFully(file: FileHandle, data: Uint8Array): Promise<void> {
  noteBulkWrite();
  for (let at = 0; at < data.length; ) at += (await file.write(data, at, data.length - at)).bytesWritten;
}

/** The file's fsync, counted as a bulk write while it runs (a staged gigabyte's takes seconds). */
export function syncBulk(file: FileHandle): Promise<void> {
  return duringBulkSync(() => file.sync());
}

/** All of `into` read from `position` on; rejects if the file ends first. */
export async function readFully(file: FileHandle, into: Uint8Array, position: number): Promise<void> {
  let at = 0;
  while (at < into.length) {
    const { bytesRead } = await file.read(into, at, into.length - at, position + at);
    if (bytesRead === 0) throw new Error(`the file ends at ${position + at} bytes`);
    at += bytesRead;
  }
}
