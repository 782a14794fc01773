// A restore's archive unpacked to a file as it is read (archive.ts extractArchive): the state file
// holds exactly the archive's state.bin, every checksum verified; a state above the bound is refused
// at its header, a damaged one at its checksum, and neither leaves a file behind.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { extractArchive, writeArchive } from '../../src/snapshot/archive';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'extract-archive-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const at = { index: 42, term: 3, datacenter: 'dc1' };
const source = (archive: Uint8Array) => Readable.from([Buffer.from(archive)]);

test('the state goes to the file whole; above the bound or damaged, refused with no file left', async () => {
  const state = Buffer.alloc(3 * 1024 * 1024);
  for (let i = 0; i < state.length; i += 4096) state.writeUInt32BE(i, i);
  const archive = await writeArchive(state, at);

  const path = join(dir, 'state.bin');
  const meta = await extractArchive(source(archive), path);
  expect([meta.Index, meta.Size]).toEqual([42, state.length]);
  expect(readFileSync(path).equals(state)).toBe(true);

  const small = join(dir, 'small.bin');
  await expect(extractArchive(source(archive), small, 1024 * 1024)).rejects.toThrow(/state\.bin declares 3145728 bytes; at most 1048576/);
  expect(existsSync(small)).toBe(false);

  // One byte of state.bin flipped inside the tar (the gzip around it is made again): the sums catch it.
  const tar = gunzipSync(archive);
  const at0 = tar.indexOf(state.subarray(4096, 4096 + 64));
  tar[at0 + 10] ^= 1;
  const damaged = join(dir, 'damaged.bin');
  await expect(extractArchive(source(gzipSync(tar)), damaged)).rejects.toThrow(/checksum mismatch for state\.bin/);
  expect(existsSync(damaged)).toBe(false);
});
