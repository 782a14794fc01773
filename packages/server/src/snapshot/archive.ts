// The backup archive of GET/PUT /v1/snapshot, readable without a server (the CLI's `snapshot
// inspect` imports only this file and the three beside it it needs): a gzipped tar, as Consul's, holding
//   meta.json   {Version, Format, ID, Index, Term, Size, Checksum, Datacenter, Created}
//   state.bin   the store's snapshot bytes (packages/store snapshot.ts, msgpack, version 1)
//   SHA256SUMS  "<hex>  meta.json" and "<hex>  state.bin", as `sha256sum` writes them
// A tar rather than a format of our own: operators can open a backup with `tar -xzf` and check it
// with `sha256sum -c SHA256SUMS`. Nothing here blocks the event loop for long: gzip runs on the
// thread pool and hashing runs in 1 MiB slices (on reading, chunk by chunk as the tar streams in).
// Writing uses tar-stream; reading is tar-reader.ts, strict (only these three members, each once,
// plain ustar headers), so a hostile archive is refused at its first bad header.
import { createHash } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { ArchiveError } from './archive-error';
import { syncBulk, writeFully } from './file-io';
import { readStrictTar, type MemberSink, type TarMember } from './tar-reader';

type TarStream = typeof import('tar-stream');
let tarStream: TarStream | undefined;

/** tar-stream (and streamx under it, ~0.4 MiB of heap) is loaded by the first snapshot saved (issue #30). */
function pack(): ReturnType<TarStream['pack']> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  tarStream ??= require('tar-stream') as TarStream;
  return tarStream.pack();
}

export { ArchiveError };

export const ARCHIVE_FORMAT = 'registry-snapshot';
export const ARCHIVE_VERSION = 1;
const META = 'meta.json';
const STATE = 'state.bin';
const SUMS = 'SHA256SUMS';
/**
 * A state larger than this is refused (a gzip stream that inflates without end must not fill the
 * disk), unless a server's `snapshot_restore_max_bytes` allows more (extractArchive's bound).
 */
export const MAX_STATE_BYTES = 256 * 1024 * 1024;
const HASH_SLICE = 1 << 20;

export interface ArchiveMeta {
  Version: number;
  Format: string;
  /** `<term>-<index>-<ms since epoch>`, as Consul names snapshots. */
  ID: string;
  /** Raft index the state is the state of. */
  Index: number;
  /** Raft term of the entry at that index. */
  Term: number;
  /** Bytes of state.bin. */
  Size: number;
  /** `sha256:<hex>` of state.bin. */
  Checksum: string;
  Datacenter: string;
  /** RFC 3339 time of the save. */
  Created: string;
}

/** SHA-256 of `bytes` in hex, hashed a slice per event-loop turn. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const hash = createHash('sha256');
  for (let at = 0; at < bytes.length; at += HASH_SLICE) {
    hash.update(bytes.subarray(at, Math.min(at + HASH_SLICE, bytes.length)));
    if (at + HASH_SLICE < bytes.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return hash.digest('hex');
}

/** Where in the log a saved state stands, and where it was saved. */
export interface ArchiveAt {
  index: number;
  term: number;
  datacenter: string;
  now?: Date;
}

/** meta.json and SHA256SUMS of a state of `size` bytes whose SHA-256 is `stateSum` (hex). */
async function archiveHead(size: number, stateSum: string, at: ArchiveAt): Promise<{ metaBytes: Buffer; sums: Buffer; mtime: Date }> {
  const created = at.now ?? new Date();
  const meta: ArchiveMeta = {
    Version: ARCHIVE_VERSION,
    Format: ARCHIVE_FORMAT,
    ID: `${at.term}-${at.index}-${created.getTime()}`,
    Index: at.index,
    Term: at.term,
    Size: size,
    Checksum: `sha256:${stateSum}`,
    Datacenter: at.datacenter,
    Created: created.toISOString(),
  };
  const metaBytes = Buffer.from(JSON.stringify(meta, null, 2) + '\n');
  const sums = Buffer.from(`${await sha256Hex(metaBytes)}  ${META}\n${stateSum}  ${STATE}\n`);
  return { metaBytes, sums, mtime: created };
}

/** The archive of `state` saved at Raft `index`/`term`, whole in memory (tests, small states). */
export async function writeArchive(state: Uint8Array, at: ArchiveAt): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await archiveOf(state, at)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** archiveStream() of state bytes already in memory (handed to the tar a MiB at a time). */
export async function archiveOf(state: Uint8Array, at: ArchiveAt): Promise<Readable> {
  const bytes = Buffer.from(state.buffer, state.byteOffset, state.length);
  function* pieces(): Generator<Buffer> {
    for (let i = 0; i < bytes.length; i += HASH_SLICE) yield bytes.subarray(i, i + HASH_SLICE);
  }
  return archiveStream({ size: bytes.length, sha256: await sha256Hex(bytes), open: () => Readable.from(pieces()) }, at);
}

/** A state's bytes as archiveStream() takes them: their size and SHA-256 known, read by `open()`. */
export interface ArchiveSource {
  size: number;
  sha256: string;
  open(): Readable;
}

/**
 * The archive of a saved state as a gzip stream, made as it is read: meta.json, then state.bin as
 * `open()` reads it (its size and SHA-256 known beforehand: meta.json, first, names them), then
 * SHA256SUMS. Nothing holds the whole state or the whole archive: a save of hundreds of MiB made
 * in memory took the leader's RSS to four times the state and held its loop for 0.3-0.4 s per copy
 * (issue #34). A read error destroys the stream with it.
 */
export async function archiveStream(state: ArchiveSource, at: ArchiveAt): Promise<Readable> {
  const { metaBytes, sums, mtime } = await archiveHead(state.size, state.sha256, at);
  const tar = pack();
  const gz = createGzip();
  const fail = (err: Error) => {
    tar.destroy(err);
    gz.destroy(err);
  };
  tar.entry({ name: META, size: metaBytes.length, mode: 0o644, mtime }, metaBytes);
  const entry = tar.entry({ name: STATE, size: state.size, mode: 0o644, mtime }, (err) => {
    if (err) return fail(err);
    tar.entry({ name: SUMS, size: sums.length, mode: 0o644, mtime }, sums);
    tar.finalize();
  });
  // tar-stream's streams are streamx's, which pipe to and from Node's but are not Node streams
  // (stream.pipeline would not see them end): piped, each with its own error handler.
  const source = state.open();
  // Every part's error ends every part (the reader hears it through gz); none goes unheard.
  source.on('error', fail);
  tar.on('error', fail);
  entry.on('error', fail);
  gz.on('error', fail);
  source.pipe(entry);
  tar.pipe(gz);
  // The reader gone (a client that left): stop reading the state.
  gz.once('close', () => source.destroy());
  return gz;
}

/** Largest meta.json and SHA256SUMS accepted (ours are a few hundred bytes). */
const MAX_SMALL_MEMBER = 64 * 1024;
const memberLimits = (maxStateBytes: number): ReadonlyMap<string, number> =>
  new Map([
    [META, MAX_SMALL_MEMBER],
    [STATE, maxStateBytes],
    [SUMS, MAX_SMALL_MEMBER],
  ]);

/**
 * The metadata and state of an archive, every checksum verified. Throws an ArchiveError naming what
 * is wrong (not gzip, truncated, a missing or unexpected member, a checksum that does not match).
 */
export async function readArchive(archive: Uint8Array): Promise<{ meta: ArchiveMeta; state: Buffer }> {
  if (archive.length === 0) throw new ArchiveError('snapshot archive is empty');
  return readArchiveStream(Readable.from([Buffer.from(archive.buffer, archive.byteOffset, archive.length)]));
}

/**
 * readArchive of an archive as it streams in (a file): the gzip stream is inflated as it is read
 * and the tar read strictly as it comes (tar-reader.ts), so a bad header is refused as soon as it
 * arrives, whatever sizes it declares, and `source` is destroyed on any refusal.
 */
export async function readArchiveStream(source: Readable): Promise<{ meta: ArchiveMeta; state: Buffer }> {
  const { meta, files } = await readChecked(source, new Map(), MAX_STATE_BYTES);
  return { meta, state: files.get(STATE)!.bytes };
}

/**
 * readArchiveStream with the state written to a new file at `statePath` as it streams out of the
 * archive (and fsynced), never whole in memory: a restore's state may be hundreds of MiB. The file
 * is removed on any refusal. Answers the metadata, every checksum verified. A state larger than
 * `maxStateBytes` is refused at its header.
 */
export async function extractArchive(source: Readable, statePath: string, maxStateBytes = MAX_STATE_BYTES): Promise<ArchiveMeta> {
  const file = await open(statePath, 'wx');
  let kept = false;
  try {
    const sink: MemberSink = { write: (part) => writeFully(file, part) };
    const { meta } = await readChecked(source, new Map([[STATE, sink]]), maxStateBytes);
    await syncBulk(file);
    kept = true;
    return meta;
  } finally {
    await file.close();
    if (!kept) await rm(statePath, { force: true });
  }
}

/** The archive's members read strictly as they stream in, and every checksum verified. */
async function readChecked(source: Readable, sinks: ReadonlyMap<string, MemberSink>, maxStateBytes: number): Promise<{ meta: ArchiveMeta; files: Map<string, TarMember> }> {
  const gunzip = createGunzip({ chunkSize: 64 * 1024 });
  let sourceError: Error | undefined;
  source.on('error', (err: Error) => {
    sourceError = err;
    gunzip.destroy(err);
  });
  source.pipe(gunzip);
  let files: Map<string, TarMember>;
  try {
    files = await readStrictTar(gunzipped(gunzip), memberLimits(maxStateBytes), sinks);
  } catch (err) {
    if (err instanceof ArchiveError) throw err;
    if (sourceError) throw sourceError;
    throw new ArchiveError(`snapshot archive is not a complete gzip stream: ${(err as Error).message}`);
  } finally {
    source.unpipe(gunzip);
    source.destroy();
    gunzip.destroy();
  }
  for (const name of [META, STATE, SUMS]) {
    if (!files.has(name)) throw new ArchiveError(`snapshot archive has no ${name}`);
  }
  // As Consul's hashList.DecodeAndVerify: every line names a member read, every member has its line.
  const sums = parseSums(files.get(SUMS)!.bytes.toString('utf8'));
  for (const name of sums.keys()) {
    if (name !== META && name !== STATE) throw new ArchiveError(`${SUMS} lists ${JSON.stringify(name)}, which is not in the archive`);
  }
  for (const name of [META, STATE]) {
    const expected = sums.get(name);
    if (!expected) throw new ArchiveError(`${SUMS} has no line for ${name}`);
    if (files.get(name)!.sha256 !== expected) throw new ArchiveError(`checksum mismatch for ${name}: the archive is corrupt`);
  }
  const meta = parseMeta(files.get(META)!.bytes);
  const size = files.get(STATE)!.size;
  if (meta.Size !== size) throw new ArchiveError(`${STATE} has ${size} bytes, ${META} says ${meta.Size}`);
  if (meta.Checksum !== `sha256:${sums.get(STATE)}`) throw new ArchiveError(`${META} checksum disagrees with ${SUMS}`);
  return { meta, files };
}

/** Only the metadata (for `snapshot inspect`), after the same checks as readArchive. */
export async function inspectArchive(archive: Uint8Array): Promise<ArchiveMeta> {
  return (await readArchive(archive)).meta;
}

/** The inflated bytes; an empty input is named as such rather than as zlib's "unexpected end". */
async function* gunzipped(gunzip: Readable): AsyncGenerator<Buffer> {
  let any = false;
  for await (const chunk of gunzip) {
    any = true;
    yield chunk as Buffer;
  }
  if (!any) throw new ArchiveError('snapshot archive is empty');
}

function parseSums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const m = /^([0-9a-f]{64}) [ *](\S+)$/.exec(line);
    if (!m) throw new ArchiveError(`${SUMS} has a malformed line`);
    sums.set(m[2], m[1]);
  }
  return sums;
}

function parseMeta(bytes: Buffer): ArchiveMeta {
  let m: Partial<ArchiveMeta>;
  try {
    m = JSON.parse(bytes.toString('utf8')) as Partial<ArchiveMeta>;
  } catch {
    throw new ArchiveError(`${META} is not JSON`);
  }
  if (m.Format !== ARCHIVE_FORMAT) throw new ArchiveError(`${META}: not a ${ARCHIVE_FORMAT} archive`);
  if (typeof m.Version === 'number' && m.Version > ARCHIVE_VERSION) {
    // A backup made by a newer release (issue #34): said as such, with both versions, rather than as a bad archive.
    throw new ArchiveError(`${META}: snapshot archive version ${m.Version} is newer than this registry reads (archive version ${ARCHIVE_VERSION}): restore it with a registry release that reads archive version ${m.Version}`);
  }
  if (m.Version !== ARCHIVE_VERSION) throw new ArchiveError(`${META}: archive version ${String(m.Version)} is not supported (expected ${ARCHIVE_VERSION})`);
  for (const k of ['Index', 'Term', 'Size'] as const) {
    if (!Number.isSafeInteger(m[k]) || (m[k] as number) < 0) throw new ArchiveError(`${META}: ${k} must be a non-negative integer`);
  }
  if (typeof m.Checksum !== 'string') throw new ArchiveError(`${META}: Checksum missing`);
  return m as ArchiveMeta;
}
