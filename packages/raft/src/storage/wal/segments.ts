// The write-ahead log's files: numbered segments in one folder, each a run of records
//   [u32 body length][u32 CRC-32 of the body][body]   (little-endian)
// written in order. A segment is made whole before it takes records: zero-filled to `segmentBytes`
// and synced under a temporary name, then renamed (and the folder synced). It is opened O_DSYNC, so
// each record is one positioned write that returns once the bytes are on the disk — made on the event
// loop for a small record, else one trip through libuv's pool (inline-writes.ts says which and why) —
// and, since the blocks already exist, no file-size or block-allocation metadata for the file system
// to commit with it. The next segment is prepared in the background once the
// current one is half full (the first as soon as an empty log is opened), as etcd's WAL keeps a
// preallocated file ready.
//
// Why not LevelDB, which held the log before: a synced LevelDB batch of one small record cost
// 0.52–0.86 ms with three processes syncing at once on this machine's disk, a positioned O_DSYNC
// write into a zero-filled file 0.35–0.68 ms side by side (bench/storage/sync-cost.js); LevelDB also writes the
// log a second time and more (memtable flushes, compactions). A leader's and a follower's sync sit
// on every write's path (docs/benchmarks/history.md, "Latency").
//
// The end of the records is the first zero length (the zero-filled rest of the segment). Crashes and
// failures:
// - A record cut short by a crash (cut-off header or body, CRC mismatch) can only be in the newest
//   segment: replay stops before it and zeroes whatever is left after the last whole record, so a
//   later, shorter record can never be followed by the remains of the torn one. The same in an
//   older segment is corruption, and replay refuses it (as etcd's WAL does).
// - A failed write (an I/O error) may leave part of the record on the disk: the next write first
//   zeroes that span again, then writes. So a retry of the same record is correct.
// - A segment that could not be made (a full disk) fails the write that needed it; the write is
//   retried (RaftNode does) and makes it again. Writes into a made segment need no new space.
// - Descriptors (issue 33: a flood of connections used them all and the log could not open its next
//   file): the files a write needs are open before it needs them — the folder (for its syncs) and
//   the newest segment from the start, the next segment from when it is prepared, its descriptor
//   kept and used as is once renamed into place. A roll opens nothing; only a spare that could not
//   be prepared has to be made (and opened) by the write that needs it.
import { closeSync, close, fsync, fsyncSync, open, openSync, readdirSync, readFileSync, rename, unlinkSync, write, writeSync, writev, writevSync, constants } from 'node:fs';
import { unlink as unlinkAsync } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { monotonicMs } from '../../monotonic-clock';
import { InlineWrites } from './inline-writes';
import { makeDirDurablySync } from '../durable-dir';

const SUFFIX = '.wal';
const TEMP = '.wal.tmp';
const HEADER = 8;
const ZEROS = Buffer.alloc(1 << 20);
/** Positioned writes that return once durable (data, and metadata only where it is needed to read it back). */
const SYNCED_WRITES = constants.O_RDWR | constants.O_DSYNC;

/** One segment file. */
export interface SegmentInfo {
  seq: number;
  path: string;
}

/** A segment made whole under its temporary name, open for synced writes. */
interface MadeSegment {
  path: string;
  fd: number;
}

export class CorruptSegmentError extends Error {
  constructor(path: string, offset: number, why: string) {
    super(`raft write-ahead log ${path} is corrupt at byte ${offset}: ${why}`);
    this.name = 'CorruptSegmentError';
  }
}

/** Whether a file name is a segment's (not one being made). */
export function isSegmentName(name: string): boolean {
  return /^[0-9a-f]{16}\.wal$/.test(name);
}

function segmentName(seq: number): string {
  return seq.toString(16).padStart(16, '0') + SUFFIX;
}

/**
 * A record body and its header (length, CRC-32 of the body), written together by one `writev`. The
 * body comes in pieces (record-body.ts: large entry payloads referenced where they are), so neither
 * the framing nor the encoding copies them into a new buffer. A record of a write load's batch is
 * hundreds of KiB (64 values of 4 KiB), and each copy was of every value and external memory for V8
 * to count towards its next collection (docs/benchmarks/history.md, "Where a 1 GiB load's CPU goes").
 */
export class FramedRecord {
  readonly header = Buffer.allocUnsafe(HEADER);
  /** Header and body pieces, in order: what one writev writes. */
  readonly pieces: Uint8Array[];
  /** Bytes on the disk, header included. */
  readonly length: number;

  constructor(body: readonly Uint8Array[]) {
    let bytes = 0;
    let crc = 0;
    for (const piece of body) {
      bytes += piece.length;
      crc = crc32(piece, crc);
    }
    this.header.writeUInt32LE(bytes, 0);
    this.header.writeUInt32LE(crc, 4);
    this.pieces = [this.header, ...body];
    this.length = FramedRecord.lengthOf(bytes);
  }

  /** Bytes on the disk of a record whose body is `bodyBytes`. */
  static lengthOf(bodyBytes: number): number {
    return HEADER + bodyBytes;
  }
}

/**
 * The whole records of one segment's bytes, up to the first zero length or the end of the bytes;
 * `end` is where the last whole record ends, and `torn` why the bytes there are not a record (a
 * zero length is no reason: that is the zero-filled rest).
 */
export function parseSegment(bytes: Buffer): { bodies: Buffer[]; end: number; torn?: string } {
  const bodies: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < HEADER) return bytes.subarray(at).every((b) => b === 0) ? { bodies, end: at } : { bodies, end: at, torn: 'a header cut short' };
    const length = bytes.readUInt32LE(at);
    if (length === 0) return { bodies, end: at };
    if (at + HEADER + length > bytes.length) return { bodies, end: at, torn: 'a record cut short' };
    const body = bytes.subarray(at + HEADER, at + HEADER + length);
    if (crc32(body) !== bytes.readUInt32LE(at + 4)) return { bodies, end: at, torn: 'a CRC mismatch' };
    bodies.push(body);
    at += HEADER + length;
  }
  return { bodies, end: at };
}

/** One past the last byte of `bytes` that is not zero (0 when all are). Compares in blocks first. */
function endOfNonZero(bytes: Buffer, from: number): number {
  const block = 64 << 10;
  let to = bytes.length;
  while (to > from) {
    const start = Math.max(from, to - block);
    const piece = bytes.subarray(start, to);
    if (!piece.equals(ZEROS.subarray(0, piece.length))) {
      for (let i = piece.length - 1; i >= 0; i--) if (piece[i] !== 0) return start + i + 1;
    }
    to = start;
  }
  return from;
}

function callback<T>(run: (done: (err: NodeJS.ErrnoException | null, value?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => run((err, value) => (err ? reject(err) : resolve(value as T))));
}

async function writeAll(fd: number, bytes: Buffer, position: number): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    written += await callback<number>((done) => write(fd, bytes, written, bytes.length - written, position + written, done));
  }
}

function writeAllInline(fd: number, bytes: Buffer, position: number): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written, position + written);
}

// A record is one positioned `writev` of header and body, so one synced write. A short write (not
// seen on a regular file, but allowed) is finished with plain writes of what is left, each synced.
async function writeRecord(fd: number, record: FramedRecord, position: number): Promise<void> {
  const written = await callback<number>((done) => writev(fd, record.pieces, position, done));
  if (written < record.length) await writeAll(fd, leftAfter(record, written), position + written);
}

function writeRecordInline(fd: number, record: FramedRecord, position: number): void {
  const written = writevSync(fd, record.pieces, position);
  if (written < record.length) writeAllInline(fd, leftAfter(record, written), position + written);
}

/** The bytes of `record` after its first `written` (fewer than its length). */
function leftAfter(record: FramedRecord, written: number): Buffer {
  return Buffer.concat(record.pieces).subarray(written);
}

export class SegmentFiles {
  private segments: SegmentInfo[] = [];
  /** Unlinks under way (remove()). */
  private readonly removals = new Set<Promise<void>>();
  private fd = -1;
  /** End of the last record known durable in the newest segment. */
  private size = 0;
  /** A write that failed: its span is zeroed again before the next write. */
  private failed: { at: number; length: number } | null = null;
  /** The next segment, being made (or made) under its temporary name, with its open descriptor. */
  private spare: { seq: number; made: Promise<MadeSegment> } | null = null;
  /** The folder, open for the syncs that make renames and removals durable. */
  private dirFd = -1;

  constructor(
    readonly dir: string,
    private readonly segmentBytes: number,
    private readonly inlineWrites: InlineWrites = new InlineWrites(),
  ) {}

  /**
   * Reads every segment in order (synchronously: this runs once, before the server serves) and
   * hands each record's body to `each`; clears a torn tail off the newest segment.
   */
  replay(each: (body: Buffer, seq: number) => void): void {
    // Its name (and its parents' names, where made) on the disk before any segment goes in it.
    makeDirDurablySync(this.dir);
    const names = readdirSync(this.dir);
    // A segment being made when the process stopped: made again when needed (not the one this
    // process is making now, when a store already open is read again).
    const making = this.spare ? segmentName(this.spare.seq) + '.tmp' : '';
    for (const name of names) if (name.endsWith(TEMP) && name !== making) unlinkSync(join(this.dir, name));
    this.segments = names
      .filter(isSegmentName)
      .map((name) => ({ seq: parseInt(name.slice(0, 16), 16), path: join(this.dir, name) }))
      .sort((a, b) => a.seq - b.seq);
    for (let i = 0; i < this.segments.length; i++) {
      const segment = this.segments[i];
      const bytes = readFileSync(segment.path);
      const { bodies, end, torn } = parseSegment(bytes);
      const newest = i === this.segments.length - 1;
      if (torn && !newest) throw new CorruptSegmentError(segment.path, end, torn);
      for (const body of bodies) each(body, segment.seq);
      if (newest) {
        // Anything after the last whole record is the remains of a torn write: zero it.
        const dirty = endOfNonZero(bytes, end);
        if (dirty > end) {
          const fd = openSync(segment.path, 'r+');
          try {
            for (let at = end; at < dirty; at += ZEROS.length) writeSync(fd, ZEROS, 0, Math.min(ZEROS.length, dirty - at), at);
            fsyncSync(fd);
          } finally {
            closeSync(fd);
          }
        }
        this.size = end;
      }
    }
    // Open now what writes will need, while descriptors are surely there (see the header).
    if (this.dirFd < 0) this.dirFd = openSync(this.dir, 'r');
    if (this.segments.length > 0 && this.fd < 0) this.fd = openSync(this.newest().path, SYNCED_WRITES);
    // A new log: make its first segment now, while the server starts, rather than at its first
    // write (a bootstrap or the first append from a leader would wait for the zero-fill).
    if (this.segments.length === 0 && !this.spare) this.prepareSpare();
  }

  /** The segments on disk, oldest first (the last takes the writes). */
  list(): readonly SegmentInfo[] {
    return this.segments;
  }

  /** Whether a record of `bytes` (framed) goes into a new segment: the caller then makes it self-contained. */
  wouldRoll(bytes: number): boolean {
    return this.segments.length === 0 || (this.size > 0 && this.size + bytes > this.segmentBytes);
  }

  /** Appends one record, durably. Rolls first when wouldRoll says so. */
  async append(record: FramedRecord): Promise<void> {
    if (this.failed) await this.clearFailed();
    if (this.wouldRoll(record.length)) await this.roll();
    else if (this.fd < 0) this.fd = await callback<number>((done) => open(this.newest().path, SYNCED_WRITES, done));
    const started = monotonicMs();
    try {
      if (this.inlineWrites.inline(record.length)) writeRecordInline(this.fd, record, this.size);
      else await writeRecord(this.fd, record, this.size);
      this.inlineWrites.took(monotonicMs() - started, record.length);
    } catch (err) {
      this.failed = { at: this.size, length: record.length };
      throw err;
    }
    this.size += record.length;
    if (!this.spare && this.size > this.segmentBytes / 2) this.prepareSpare();
  }

  /**
   * Removes the given segments (never the newest: it takes the writes). They leave the list at once;
   * their files are unlinked off the event loop, and the promise settles when they are gone. Unlinking
   * a 1 MiB file costs ~1 ms, and a snapshot at 512 MiB of state compacts ~240 of them: done with
   * unlinkSync, that stalled a leader's loop 125–235 ms after every snapshot (issue #34). A segment
   * whose unlink fails goes back on the list (the next compaction tries again) and the promise rejects.
   */
  remove(segments: readonly SegmentInfo[]): Promise<void> {
    const newest = this.newest();
    const doomed = segments.filter((s) => s !== newest);
    if (doomed.length === 0) return Promise.resolve();
    this.segments = this.segments.filter((s) => !doomed.includes(s));
    const removal = (async () => {
      const failed: SegmentInfo[] = [];
      let error: unknown = null;
      for (const s of doomed) {
        await unlinkAsync(s.path).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return;
          failed.push(s);
          error ??= err;
        });
      }
      if (failed.length > 0) {
        this.segments = [...failed, ...this.segments].sort((a, b) => a.seq - b.seq);
        throw error;
      }
    })();
    this.removals.add(removal);
    void removal.catch(() => undefined).finally(() => this.removals.delete(removal));
    return removal;
  }

  async close(): Promise<void> {
    // A store opened again after this must not find a file that is being unlinked.
    await Promise.allSettled([...this.removals]);
    const spare = this.spare;
    this.spare = null;
    if (spare) {
      await spare.made
        .then(async ({ path, fd }) => {
          await callback<void>((done) => close(fd, done)).catch(() => undefined);
          unlinkSync(path);
        })
        .catch(() => undefined);
    }
    await this.closeFd();
    if (this.dirFd >= 0) {
      const fd = this.dirFd;
      this.dirFd = -1;
      await callback<void>((done) => close(fd, done)).catch(() => undefined);
    }
  }

  private newest(): SegmentInfo {
    return this.segments[this.segments.length - 1];
  }

  private async closeFd(): Promise<void> {
    if (this.fd < 0) return;
    const fd = this.fd;
    this.fd = -1;
    await callback<void>((done) => close(fd, done)).catch(() => undefined);
  }

  /** Starts making the next segment in the background; a failure is met again by the roll that needs it. */
  private prepareSpare(): void {
    const seq = this.segments.length === 0 ? 1 : this.newest().seq + 1;
    const made = this.make(seq);
    made.catch(() => undefined); // the roll awaits it and sees the failure then
    this.spare = { seq, made };
  }

  /** A zero-filled, synced file of `segmentBytes` under the segment's temporary name, left open for synced writes. */
  private async make(seq: number): Promise<MadeSegment> {
    const path = join(this.dir, segmentName(seq) + '.tmp');
    const fd = await callback<number>((done) => open(path, SYNCED_WRITES | constants.O_CREAT | constants.O_TRUNC, done));
    try {
      for (let at = 0; at < this.segmentBytes; at += ZEROS.length) {
        await writeAll(fd, ZEROS.subarray(0, Math.min(ZEROS.length, this.segmentBytes - at)), at);
      }
      await callback<void>((done) => fsync(fd, done));
    } catch (err) {
      await callback<void>((done) => close(fd, done)).catch(() => undefined);
      try {
        unlinkSync(path);
      } catch {
        // best effort: replay removes leftovers
      }
      throw err;
    }
    return { path, fd };
  }

  /** Moves to the next segment: the prepared one (or one made now), renamed into place. */
  private async roll(): Promise<void> {
    const seq = this.segments.length === 0 ? 1 : this.newest().seq + 1;
    const spare = this.spare?.seq === seq ? this.spare : null;
    this.spare = null;
    const made = spare ? await spare.made.catch(() => this.make(seq)) : await this.make(seq);
    const segment = { seq, path: join(this.dir, segmentName(seq)) };
    try {
      await callback<void>((done) => rename(made.path, segment.path, done));
      await this.syncDir();
    } catch (err) {
      // Not in place: the next attempt makes it again (replay removes a leftover temporary file).
      await callback<void>((done) => close(made.fd, done)).catch(() => undefined);
      throw err;
    }
    await this.closeFd();
    // The descriptor opened when it was made: a rename leaves it on the same file.
    this.fd = made.fd;
    this.segments.push(segment);
    this.size = 0;
  }

  /** After a failed write: its span zeroed again (durably), so the retry writes onto a clean tail. */
  private async clearFailed(): Promise<void> {
    const { at, length } = this.failed!;
    await this.closeFd();
    this.fd = await callback<number>((done) => open(this.newest().path, SYNCED_WRITES, done));
    for (let done = 0; done < length; done += ZEROS.length) {
      await writeAll(this.fd, ZEROS.subarray(0, Math.min(ZEROS.length, length - done)), at + done);
    }
    this.failed = null;
  }

  private async syncDir(): Promise<void> {
    if (this.dirFd < 0) this.dirFd = await callback<number>((done) => open(this.dir, 'r', done));
    await callback<void>((done) => fsync(this.dirFd, done));
  }
}
