// The backup archive of GET/PUT /v1/snapshot, readable without a server (the CLI's `snapshot
// inspect` imports only this file): a gzipped tar, as Consul's, holding
//   meta.json   {Version, Format, ID, Index, Term, Size, Checksum, Datacenter, Created}
//   state.bin   the store's snapshot bytes (packages/store snapshot.ts, msgpack, version 1)
//   SHA256SUMS  "<hex>  meta.json" and "<hex>  state.bin", as `sha256sum` writes them
// A tar rather than a format of our own: operators can open a backup with `tar -xzf` and check it
// with `sha256sum -c SHA256SUMS`. Nothing here blocks the event loop for long: gzip runs on the
// thread pool and hashing runs in 1 MiB slices.
import { createHash } from 'node:crypto';
import { gunzip, gzip } from 'node:zlib';
import { promisify } from 'node:util';
import { extract, pack } from 'tar-stream';

export const ARCHIVE_FORMAT = 'registry-snapshot';
export const ARCHIVE_VERSION = 1;
const META = 'meta.json';
const STATE = 'state.bin';
const SUMS = 'SHA256SUMS';
/** A state larger than this is refused (the Raft transport's frame limit is 512 MiB). */
const MAX_STATE_BYTES = 256 * 1024 * 1024;
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

/** An archive that is not one, or is damaged: the reason is one line, fit for a 400. */
export class ArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveError';
  }
}

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** SHA-256 of `bytes` in hex, hashed a slice per event-loop turn. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const hash = createHash('sha256');
  for (let at = 0; at < bytes.length; at += HASH_SLICE) {
    hash.update(bytes.subarray(at, Math.min(at + HASH_SLICE, bytes.length)));
    if (at + HASH_SLICE < bytes.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return hash.digest('hex');
}

/** The archive of `state` saved at Raft `index`/`term`. */
export async function writeArchive(state: Uint8Array, at: { index: number; term: number; datacenter: string; now?: Date }): Promise<Buffer> {
  const created = at.now ?? new Date();
  const stateSum = await sha256Hex(state);
  const meta: ArchiveMeta = {
    Version: ARCHIVE_VERSION,
    Format: ARCHIVE_FORMAT,
    ID: `${at.term}-${at.index}-${created.getTime()}`,
    Index: at.index,
    Term: at.term,
    Size: state.length,
    Checksum: `sha256:${stateSum}`,
    Datacenter: at.datacenter,
    Created: created.toISOString(),
  };
  const metaBytes = Buffer.from(JSON.stringify(meta, null, 2) + '\n');
  const sums = Buffer.from(`${await sha256Hex(metaBytes)}  ${META}\n${stateSum}  ${STATE}\n`);
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    tar.on('end', resolve);
    tar.on('error', reject);
  });
  const mtime = created;
  tar.entry({ name: META, size: metaBytes.length, mode: 0o644, mtime }, metaBytes);
  tar.entry({ name: STATE, size: state.length, mode: 0o644, mtime }, Buffer.from(state.buffer, state.byteOffset, state.length));
  tar.entry({ name: SUMS, size: sums.length, mode: 0o644, mtime }, sums);
  tar.finalize();
  await ended;
  return gzipAsync(Buffer.concat(chunks));
}

/**
 * The metadata and state of an archive, every checksum verified. Throws an ArchiveError naming what
 * is wrong (not gzip, truncated, a missing member, a checksum that does not match).
 */
export async function readArchive(archive: Uint8Array): Promise<{ meta: ArchiveMeta; state: Buffer }> {
  if (archive.length === 0) throw new ArchiveError('snapshot archive is empty');
  let tarBytes: Buffer;
  try {
    tarBytes = await gunzipAsync(archive, { maxOutputLength: MAX_STATE_BYTES + (1 << 20) });
  } catch (err) {
    throw new ArchiveError(`snapshot archive is not a complete gzip stream: ${(err as Error).message}`);
  }
  const files = await untar(tarBytes);
  for (const name of [META, STATE, SUMS]) {
    if (!files.has(name)) throw new ArchiveError(`snapshot archive has no ${name}`);
  }
  const sums = parseSums(files.get(SUMS)!.toString('utf8'));
  for (const name of [META, STATE]) {
    const expected = sums.get(name);
    if (!expected) throw new ArchiveError(`${SUMS} has no line for ${name}`);
    if ((await sha256Hex(files.get(name)!)) !== expected) throw new ArchiveError(`checksum mismatch for ${name}: the archive is corrupt`);
  }
  const meta = parseMeta(files.get(META)!);
  const state = files.get(STATE)!;
  if (meta.Size !== state.length) throw new ArchiveError(`${STATE} has ${state.length} bytes, ${META} says ${meta.Size}`);
  if (meta.Checksum !== `sha256:${sums.get(STATE)}`) throw new ArchiveError(`${META} checksum disagrees with ${SUMS}`);
  return { meta, state };
}

/** Only the metadata (for `snapshot inspect`), after the same checks as readArchive. */
export async function inspectArchive(archive: Uint8Array): Promise<ArchiveMeta> {
  return (await readArchive(archive)).meta;
}

function untar(bytes: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    const files = new Map<string, Buffer>();
    const ex = extract();
    let failed = false;
    const fail = (message: string) => {
      if (failed) return;
      failed = true;
      ex.destroy();
      reject(new ArchiveError(message));
    };
    ex.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (data: unknown) => {
        const c = data as Buffer;
        size += c.length;
        if (size > MAX_STATE_BYTES) fail(`snapshot archive member ${header.name} is larger than ${MAX_STATE_BYTES} bytes`);
        else chunks.push(c);
      });
      stream.on('end', () => {
        if (header.type === 'file') {
          if (files.has(header.name)) return fail(`snapshot archive holds ${header.name} twice`);
          files.set(header.name, Buffer.concat(chunks));
        }
        next();
      });
      stream.on('error', (err: Error) => fail(`snapshot archive is not a valid tar: ${err.message}`));
    });
    ex.on('finish', () => {
      if (!failed) resolve(files);
    });
    ex.on('error', (err: Error) => fail(`snapshot archive is not a valid tar: ${err.message}`));
    ex.end(bytes);
  });
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
  if (m.Version !== ARCHIVE_VERSION) throw new ArchiveError(`${META}: archive version ${String(m.Version)} is not supported (expected ${ARCHIVE_VERSION})`);
  for (const k of ['Index', 'Term', 'Size'] as const) {
    if (!Number.isSafeInteger(m[k]) || (m[k] as number) < 0) throw new ArchiveError(`${META}: ${k} must be a non-negative integer`);
  }
  if (typeof m.Checksum !== 'string') throw new ArchiveError(`${META}: Checksum missing`);
  return m as ArchiveMeta;
}
