// The strict reader of a snapshot archive's tar (the gunzipped bytes, as they stream in). Consul's
// reader (snapshot/archive.go `read`) takes exactly meta.json, state.bin and SHA256SUMS and refuses
// any other member; this one also refuses, at the header that shows it and before any of the
// member's bytes are taken in: a header whose checksum is wrong, a size field that is not plain
// octal (base-256 or garbage) or larger than that member may be, a name with a path or a prefix, a
// member that is not a regular file or comes twice, and an archive without its two end blocks.
// Whatever an archive declares, it costs at most what its own bytes are, and a refusal comes as
// soon as the bad header does. Every error is an ArchiveError with a one-line reason.
import { createHash } from 'node:crypto';
import { ArchiveError } from './archive-error';

const BLOCK = 512;
/** Zero bytes a writer may pad the archive with after its end blocks (GNU tar pads to 10 KiB records). */
const MAX_TRAILING_ZEROS = 64 * 1024;

export interface TarMember {
  /** Its bytes (empty for a member given to a sink). */
  bytes: Buffer;
  size: number;
  /** SHA-256 of its bytes, in hex. */
  sha256: string;
}

/** Where a member's bytes go instead of memory, in order, as they arrive (a file: a restore's state). */
export interface MemberSink {
  write(part: Buffer): Promise<void>;
}

/**
 * What the archive's tar holds: each member, by name (exactly the names of `limits`, at most once
 * each). The bytes of a member named in `sinks` go there as they come and are not kept.
 */
export async function readStrictTar(source: AsyncIterable<Buffer>, limits: ReadonlyMap<string, number>, sinks: ReadonlyMap<string, MemberSink> = new Map()): Promise<Map<string, TarMember>> {
  const members = new Map<string, TarMember>();
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  // The member being read (set in headerBlock, hence the casts below: TypeScript does not follow it there).
  let current: OpenMember | null = null;
  let zeroBlocks = 0;
  let trailing = 0;

  const headerBlock = (block: Buffer) => {
    if (zeroBlocks > 0 || isZero(block)) {
      if (!isZero(block)) throw new ArchiveError('snapshot archive has data after an end-of-archive block');
      zeroBlocks++;
      return;
    }
    const { name, size } = parseHeader(block, limits);
    if (members.has(name)) throw new ArchiveError(`snapshot archive holds ${name} twice`);
    current = { name, size, left: size, pad: (BLOCK - (size % BLOCK)) % BLOCK, chunks: [], hash: createHash('sha256'), sink: sinks.get(name) };
    if (size === 0) finish();
  };
  const finish = () => {
    const m = current!;
    members.set(m.name, { bytes: Buffer.concat(m.chunks), size: m.size, sha256: m.hash.digest('hex') });
    m.chunks = [];
  };

  for await (const data of source) {
    let chunk = data;
    while (chunk.length > 0) {
      if (zeroBlocks >= 2) {
        // Past the end: only a writer's zero padding may follow.
        if (!isZero(chunk)) throw new ArchiveError('snapshot archive has data after its end-of-archive blocks');
        trailing += chunk.length;
        if (trailing > MAX_TRAILING_ZEROS) throw new ArchiveError(`snapshot archive has more than ${MAX_TRAILING_ZEROS} bytes of padding after its end`);
        break;
      }
      const m = current as OpenMember | null;
      if (m && m.left > 0) {
        const take = Math.min(m.left, chunk.length);
        const part = chunk.subarray(0, take);
        m.hash.update(part);
        // A sink's write is awaited: the gunzipped stream waits for the disk (back-pressure).
        if (m.sink) await m.sink.write(part);
        else m.chunks.push(Buffer.from(part));
        m.left -= take;
        chunk = chunk.subarray(take);
        if (m.left === 0) finish();
        continue;
      }
      if (m && m.pad > 0) {
        const skip = Math.min(m.pad, chunk.length);
        m.pad -= skip;
        chunk = chunk.subarray(skip);
        continue;
      }
      current = null;
      // A header block: gather 512 bytes.
      const need = BLOCK - pendingBytes;
      const part = chunk.subarray(0, need);
      pending.push(part);
      pendingBytes += part.length;
      chunk = chunk.subarray(part.length);
      if (pendingBytes === BLOCK) {
        const block = Buffer.concat(pending, BLOCK);
        pending.length = 0;
        pendingBytes = 0;
        headerBlock(block);
      }
    }
  }
  const open = current as OpenMember | null;
  if (open && (open.left > 0 || open.pad > 0)) throw new ArchiveError(`snapshot archive is truncated: ${open.name} ends early`);
  if (pendingBytes > 0) throw new ArchiveError('snapshot archive is truncated: it ends inside a header block');
  if (zeroBlocks < 2) throw new ArchiveError('snapshot archive is truncated: it has no end-of-archive blocks');
  return members;
}

/** A member being read: its name, bytes still to come, padding after them, what came so far. */
interface OpenMember {
  name: string;
  size: number;
  sink?: MemberSink;
  left: number;
  pad: number;
  chunks: Buffer[];
  hash: ReturnType<typeof createHash>;
}

function isZero(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** A member's name and size, or the reason the header is refused. */
function parseHeader(block: Buffer, limits: ReadonlyMap<string, number>): { name: string; size: number } {
  const stored = octalField(block, 148, 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  if (stored === null || stored !== sum) throw new ArchiveError('snapshot archive is not a valid tar: a header checksum does not match');
  const rawName = cString(block, 0, 100);
  const shown = JSON.stringify(rawName.slice(0, 100));
  const magic = block.toString('latin1', 257, 263);
  // ustar ("ustar\0") and GNU ("ustar ") headers have a prefix field; an old v7 header has none.
  if ((magic === 'ustar\0' || magic === 'ustar ') && !isZero(block.subarray(345, 500))) {
    throw new ArchiveError(`snapshot archive member ${shown} has a path prefix; only meta.json, state.bin and SHA256SUMS may be in it`);
  }
  const limit = limits.get(rawName);
  if (limit === undefined) throw new ArchiveError(`unexpected member ${shown} in snapshot archive; only meta.json, state.bin and SHA256SUMS may be in it`);
  const type = block[156];
  if (type !== 0x30 && type !== 0) throw new ArchiveError(`snapshot archive member ${rawName} is not a regular file`);
  const size = octalField(block, 124, 12);
  if (size === null) throw new ArchiveError(`snapshot archive member ${rawName} has a size field that is not an octal number`);
  if (size > limit) throw new ArchiveError(`snapshot archive member ${rawName} declares ${size} bytes; at most ${limit} are accepted`);
  return { name: rawName, size };
}

/** The bytes of a NUL-terminated field, as latin1 (a name is compared byte for byte). */
function cString(block: Buffer, at: number, length: number): string {
  const end = block.indexOf(0, at);
  return block.toString('latin1', at, end < 0 || end > at + length ? at + length : end);
}

/**
 * A plain octal field: optional leading spaces, octal digits, then NUL or space to its end. Anything
 * else (base-256, which sets the top bit; other bytes) is null. At most 11 digits: 8 GiB − 1.
 */
function octalField(block: Buffer, at: number, length: number): number | null {
  let i = at;
  const end = at + length;
  while (i < end && block[i] === 0x20) i++;
  let value = 0;
  let digits = 0;
  while (i < end && block[i]! >= 0x30 && block[i]! <= 0x37) {
    value = value * 8 + (block[i]! - 0x30);
    digits++;
    i++;
  }
  if (digits === 0 || digits > 11) return null;
  for (; i < end; i++) if (block[i] !== 0 && block[i] !== 0x20) return null;
  return value;
}
