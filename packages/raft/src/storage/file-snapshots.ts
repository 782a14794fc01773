// Snapshots as files in a folder of their own (issue #34), as hashicorp/raft's FileSnapshotStore and
// etcd's snap/ keep them: one file per snapshot, written once under a temporary name, synced, renamed
// into place with the folder synced, and only then is the previous one removed. Nothing of a
// snapshot lives in LevelDB any more, so no compactor has dead pieces to chase (they made the data
// dir 2.4–3.2× the state, and 32–37 GB for a 1.1 GB state with frequent snapshots).
//
// One file keeps one snapshot (retain 1, not hashicorp's 2): a second copy would double the data
// dir's largest item, and nothing reads an older snapshot — a follower far behind is sent the
// newest, a restart restores the newest. While a new one is being written two exist; the old one
// goes as soon as the new one's name is durable. A reader (a snapshot being sent, a restart) holds
// its file open, so the file it reads is never replaced under it: removing a name leaves an open
// file readable to its end.
//
// File: `<gen>-<term>-<index>.snap` (gen: 16 hex digits, one more than any name in the folder when it
// is installed, so the last installed is the last name in sort order — whatever its index: a
// snapshot from the leader may be installed while an older one of our own is still being written),
// written as `tmp-<n>.snap.tmp` first.
//   magic "RGSNAP01" · u32 LE length of the meta · meta (JSON) · the snapshot's bytes ·
//   trailer: u64 LE byte count · u32 LE CRC-32 of the bytes · "SEND"
// A file whose length or trailer does not match is not a snapshot (a name is given only after the
// sync, so one is a disk fault, refused loudly); the CRC is checked whenever the bytes are read
// through to their end.
import { closeSync, openSync, readdirSync, readSync, statSync, unlinkSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { SnapshotMeta } from '../core/types';
import type { SnapshotReader } from '../interfaces';
import { duringBulkSync, noteBulkWrite } from './bulk-writes';
import { makeDirDurablySync, syncDir, syncDirSync } from './durable-dir';
import { SNAPSHOT_CHUNK_BYTES } from './snapshot-chunks';

const MAGIC = Buffer.from('RGSNAP01');
const TRAILER_MAGIC = Buffer.from('SEND');
const TRAILER_BYTES = 16;
const NAME = /^([0-9a-f]{16})-(\d+)-(\d+)\.snap$/;
const TEMP = /^tmp-\d+\.snap\.tmp$/;
/** The bytes are synced every this many while written, so the final fsync has little left to do. */
const SYNC_EVERY_BYTES = 32 << 20;
/** Pieces a reader keeps for reading into again (a send has PIECES_IN_FLIGHT out, plus the one read ahead). */
const RECYCLED_PIECES = 16;
/** readRange() checks this much of what it read per turn of the event loop (a few ms of CRC). */
const CRC_STEP_BYTES = 4 << 20;

/** The stored snapshot as its file says. */
export interface SnapshotFile {
  name: string;
  meta: SnapshotMeta;
  /** Where the bytes start in the file, and how many there are. */
  offset: number;
  size: number;
  crc: number;
}

/** A snapshot being written: invisible until install(). */
export interface SnapshotFileWriter {
  readonly meta: SnapshotMeta;
  readonly size: number;
  write(chunk: Uint8Array): Promise<void>;
  /** The trailer written and the file synced and closed (idempotent once it succeeded). */
  finish(): Promise<void>;
  /** Removes what was written (best effort). */
  abort(): Promise<void>;
  readonly finished: boolean;
  /** The temporary file, and the name it got when installed. */
  readonly temp: string;
  name?: string;
}

export class FileSnapshots {
  private current: SnapshotFile | null = null;
  private nextGen = 1;
  private nextTemp = 1;
  private opened = false;

  constructor(readonly dir: string) {}

  /**
   * Makes the folder (durably), removes temporary files of snapshots never installed (a crash) and
   * every snapshot but the newest (a crash between installing one and removing the one before).
   */
  open(): void {
    if (this.opened) return;
    makeDirDurablySync(this.dir);
    const names = readdirSync(this.dir).sort();
    let maxGen = 0;
    const snaps: string[] = [];
    for (const name of names) {
      if (!NAME.test(name)) continue;
      snaps.push(name);
      maxGen = Math.max(maxGen, parseInt(name.slice(0, 16), 16));
    }
    this.nextGen = maxGen + 1;
    const newest = snaps.pop();
    let removed = false;
    for (const name of names.filter((n) => TEMP.test(n)).concat(snaps)) {
      unlinkSync(join(this.dir, name));
      removed = true;
    }
    if (removed) syncDirSync(this.dir);
    this.current = newest ? readHeader(this.dir, newest) : null;
    this.opened = true;
  }

  /** The stored snapshot (the newest installed), or null. */
  get latest(): SnapshotFile | null {
    return this.current;
  }

  /** A new snapshot's file, written under a temporary name. */
  create(meta: SnapshotMeta): SnapshotFileWriter {
    return new Writer(meta, join(this.dir, `tmp-${this.nextTemp++}.snap.tmp`));
  }

  /**
   * A finished file becomes the stored snapshot: renamed into place and the folder synced, so it
   * survives a power cut before anything that relies on it (the log's compaction) is written.
   */
  async install(writer: SnapshotFileWriter): Promise<void> {
    if (!writer.finished) throw new Error('raft snapshot file is not finished');
    // A retried install (the rename landed, the folder sync failed) keeps the name it got.
    const name = (writer.name ??= `${(this.nextGen++).toString(16).padStart(16, '0')}-${writer.meta.term}-${writer.meta.index}.snap`);
    await rename(writer.temp, join(this.dir, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    // Off the main thread: a folder's fsync waits for the file system's journal, tens of ms on a busy disk.
    await syncDir(this.dir);
    this.current = readHeader(this.dir, name);
  }

  /** Removes every snapshot file but the stored one (it is durable: install() synced its name). */
  async removeOlder(): Promise<void> {
    const keep = this.current?.name;
    const old = readdirSync(this.dir).filter((n) => NAME.test(n) && n !== keep);
    for (const name of old) await unlink(join(this.dir, name)).catch(() => undefined);
    // Not synced: a removal lost to a crash is made again by the next open.
  }

  /**
   * The stored snapshot a piece at a time, from a file handle of its own (see the top of the file).
   * Read in order (a restore, a send), the next piece is already being read while the caller works
   * on this one: a restore decodes without waiting for the disk, and on a busy machine a piece read
   * only when asked for cost two waits for a CPU (the pool thread's and the loop's) per piece
   * (issue #34: most of a restart's restore at 256 MiB). One piece ahead: at most one more piece in
   * memory. Pieces given back by release() are read into again (at most RECYCLED_PIECES kept).
   */
  async read(pieceBytes = SNAPSHOT_CHUNK_BYTES): Promise<SnapshotReader | undefined> {
    const file = this.current;
    if (!file) return undefined;
    const fh = await open(join(this.dir, file.name), 'r');
    let crc = 0;
    let next = 0;
    const chunks = Math.ceil(file.size / pieceBytes);
    let ahead: { i: number; piece: Promise<Buffer> } | null = null;
    /** Where the next readRange() must start. */
    let rangeAt = 0;
    let closed = false;
    const free: Buffer[] = [];
    const readAt = async (i: number): Promise<Buffer> => {
      const start = i * pieceBytes;
      const length = Math.min(pieceBytes, file.size - start);
      const piece = (length === pieceBytes && free.pop()) || Buffer.allocUnsafe(length);
      const { bytesRead } = await fh.read(piece, 0, length, file.offset + start);
      if (bytesRead !== length) throw new Error(`raft snapshot ${file.name} ended early (piece ${i})`);
      return piece;
    };
    return {
      meta: file.meta,
      size: file.size,
      chunks,
      read: async (i: number) => {
        if (!(i >= 0 && i < chunks)) throw new Error(`raft snapshot piece ${i} of ${chunks} does not exist`);
        const pending = ahead?.i === i ? ahead.piece : readAt(i);
        ahead = null;
        if (i + 1 < chunks && !closed) {
          ahead = { i: i + 1, piece: readAt(i + 1) };
          // A read ahead that nobody takes (the reader closed, or another piece asked for) fails silently.
          ahead.piece.catch(() => undefined);
        }
        const piece = await pending;
        // Read in order to the end (a send, a restore): the bytes are checked against the CRC.
        if (i === next) {
          crc = crc32(piece, crc);
          next++;
          if (next === chunks && crc !== file.crc) throw new Error(`raft snapshot ${file.name} is corrupt (CRC mismatch)`);
        }
        return piece;
      },
      readRange: async (offset: number, into: Uint8Array) => {
        // In order, each byte once (a restore into arenas): checked against the CRC as read() is.
        if (offset !== rangeAt || offset + into.length > file.size) throw new Error(`raft snapshot ${file.name}: bytes ${offset}+${into.length} read out of order`);
        rangeAt += into.length;
        let done = 0;
        while (done < into.length) {
          const { bytesRead } = await fh.read(into, done, into.length - done, file.offset + offset + done);
          if (bytesRead === 0) throw new Error(`raft snapshot ${file.name} ended early (at ${offset + done})`);
          done += bytesRead;
        }
        // Checked a few MiB per turn of the loop: the CRC of a whole 32 MiB range at once held it for
        // ~20 ms. (Read in as many calls instead, each a trip through the thread pool, the restore
        // it feeds took 8 % longer.)
        for (let at = 0; at < into.length; at += CRC_STEP_BYTES) {
          if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
          crc = crc32(into.subarray(at, Math.min(into.length, at + CRC_STEP_BYTES)), crc);
        }
        if (rangeAt === file.size && crc !== file.crc) throw new Error(`raft snapshot ${file.name} is corrupt (CRC mismatch)`);
      },
      release: (piece: Uint8Array) => {
        if (!closed && piece.length === pieceBytes && Buffer.isBuffer(piece) && free.length < RECYCLED_PIECES) free.push(piece);
      },
      close: () => {
        closed = true;
        ahead = null;
        free.length = 0;
        // FileHandle.close() waits for a read still under way (the one ahead) before it closes.
        void fh.close().catch(() => undefined);
      },
    };
  }

  /** The stored snapshot's bytes whole (load(): a storage user that wants them in one buffer). */
  async readAll(): Promise<{ meta: SnapshotMeta; data: Uint8Array } | undefined> {
    const reader = await this.read();
    if (!reader) return undefined;
    try {
      const pieces: Uint8Array[] = [];
      for (let i = 0; i < reader.chunks; i++) pieces.push(await reader.read(i));
      return { meta: reader.meta, data: pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, reader.size) };
    } finally {
      reader.close();
    }
  }
}

class Writer implements SnapshotFileWriter {
  private fh: FileHandle | null = null;
  private opening: Promise<FileHandle> | null = null;
  private written = 0;
  private headLength = 0;
  private unsynced = 0;
  private crc = 0;
  /** The periodic datasync under way (not waited for by write()), and a failure of one. */
  private syncing: Promise<void> | null = null;
  private syncFailed: unknown = null;
  private done = false;
  private aborted = false;
  name?: string;

  constructor(
    readonly meta: SnapshotMeta,
    readonly temp: string,
  ) {}

  get size(): number {
    return this.written;
  }

  get finished(): boolean {
    return this.done;
  }

  private handle(): Promise<FileHandle> {
    if (!this.opening) {
      this.opening = (async () => {
        const fh = await open(this.temp, 'w', 0o644);
        const meta = Buffer.from(JSON.stringify(this.meta));
        const head = Buffer.alloc(MAGIC.length + 4);
        MAGIC.copy(head);
        head.writeUInt32LE(meta.length, MAGIC.length);
        await writeAll(fh, Buffer.concat([head, meta]), 0);
        this.headLength = head.length + meta.length;
        this.fh = fh;
        return fh;
      })();
      this.opening.catch(() => (this.opening = null));
    }
    return this.opening;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.done || this.aborted) throw new Error(`snapshot sink is already ${this.done ? 'finished' : 'aborted'}`);
    if (this.syncFailed) throw this.syncFailed;
    // The log keeps off the event loop while this file goes to the disk (bulk-writes.ts).
    noteBulkWrite();
    const fh = await this.handle();
    await writeAll(fh, chunk, this.headLength + this.written);
    this.crc = crc32(chunk, this.crc);
    this.written += chunk.length;
    this.unsynced += chunk.length;
    if (this.unsynced >= SYNC_EVERY_BYTES && !this.syncing) {
      // Beside the writes that follow, not before them: a snapshot arriving from the leader waited
      // for every 32 MiB to reach the disk, and the transfer stood still meanwhile (issue #34). The
      // dirty data stays bounded all the same; finish() syncs the rest.
      this.unsynced = 0;
      this.syncing = duringBulkSync(() => fh.datasync())
        .catch((err: unknown) => {
          this.syncFailed ??= err;
        })
        .finally(() => (this.syncing = null));
    }
  }

  async finish(): Promise<void> {
    if (this.done) return;
    if (this.aborted) throw new Error('snapshot sink is already aborted');
    const fh = await this.handle();
    await this.syncing;
    if (this.syncFailed) throw this.syncFailed;
    const trailer = Buffer.alloc(TRAILER_BYTES);
    trailer.writeBigUInt64LE(BigInt(this.written), 0);
    trailer.writeUInt32LE(this.crc, 8);
    TRAILER_MAGIC.copy(trailer, 12);
    // Positioned, so a retry after a failed write rewrites the same bytes.
    await writeAll(fh, trailer, this.headLength + this.written);
    await duringBulkSync(() => fh.sync());
    await fh.close();
    this.fh = null;
    this.done = true;
  }

  async abort(): Promise<void> {
    if (this.aborted) return;
    this.aborted = true;
    await this.syncing;
    await this.fh?.close().catch(() => undefined);
    this.fh = null;
    await unlink(this.temp).catch(() => undefined);
  }
}

/** Writes all of `bytes` at `position` (a write may be short). */
async function writeAll(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let at = 0; at < bytes.length; ) {
    const { bytesWritten } = await fh.write(bytes, at, bytes.length - at, position + at);
    at += bytesWritten;
  }
}

/** Reads and checks a snapshot file's header and trailer. */
function readHeader(dir: string, name: string): SnapshotFile {
  const path = join(dir, name);
  const fd = openSync(path, 'r');
  try {
    const length = statSync(path).size;
    const head = Buffer.alloc(MAGIC.length + 4);
    if (readSync(fd, head, 0, head.length, 0) !== head.length || !head.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error(`raft snapshot file ${path} has no snapshot header`);
    const metaLength = head.readUInt32LE(MAGIC.length);
    const metaBytes = Buffer.alloc(metaLength);
    if (readSync(fd, metaBytes, 0, metaLength, head.length) !== metaLength) throw new Error(`raft snapshot file ${path} is cut short in its header`);
    const offset = head.length + metaLength;
    const trailer = Buffer.alloc(TRAILER_BYTES);
    if (length < offset + TRAILER_BYTES || readSync(fd, trailer, 0, TRAILER_BYTES, length - TRAILER_BYTES) !== TRAILER_BYTES || !trailer.subarray(12).equals(TRAILER_MAGIC)) {
      throw new Error(`raft snapshot file ${path} has no trailer (cut short?)`);
    }
    const size = Number(trailer.readBigUInt64LE(0));
    if (offset + size + TRAILER_BYTES !== length) throw new Error(`raft snapshot file ${path} holds ${length - offset - TRAILER_BYTES} bytes, its trailer says ${size}`);
    return { name, meta: JSON.parse(metaBytes.toString('utf8')) as SnapshotMeta, offset, size, crc: trailer.readUInt32LE(8) };
  } finally {
    closeSync(fd);
  }
}
