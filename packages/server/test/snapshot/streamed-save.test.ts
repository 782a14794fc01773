// GET /v1/snapshot streams its archive (issue #34): the state is spooled to a file in the data dir a
// piece at a time and the archive is made from it as it is sent, so the answer is chunked, names
// the state's size and checksum, and round-trips; the file is gone once the archive is sent, when
// the client leaves half-way, and (left by a crash) at the next start.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { inspectArchive, readArchive } from '../../src/snapshot/archive';
import { eventually } from '../support/wait';
import { SingleServer } from './support/single-server';

jest.setTimeout(120_000);

let server: SingleServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** GET `path`: status, headers, the body whole. */
function get(port: number, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** GET `path`, then leave once the first bytes of the answer arrived. */
function getAndLeave(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: 60_000 }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
}

/**
 * 1,536 values of 4 KiB random bytes: 6 MiB of state, several of the store's 1 MiB pieces, and an
 * archive as large (random bytes do not compress), more than the sockets buffer between the two.
 */
async function fill(s: SingleServer): Promise<void> {
  for (let i = 0; i < 1536; i += 64) {
    const ops = Array.from({ length: 64 }, (_, j) => ({ KV: { Verb: 'set', Key: `big/${String(i + j).padStart(5, '0')}`, Value: randomBytes(4096).toString('base64') } }));
    const r = await s.call('PUT', '/v1/txn', Buffer.from(JSON.stringify(ops)));
    expect(r.status).toBe(200);
  }
}

test('a save streams a chunked archive of the whole state, and leaves no file behind', async () => {
  const s = (server = await SingleServer.start('streamed-save'));
  await fill(s);
  for (const path of ['/v1/snapshot', '/v1/snapshot?stale']) {
    const saved = await get(s.proc.httpPort, path);
    expect(saved.status).toBe(200);
    expect(saved.headers['content-type']).toBe('application/gzip');
    expect(saved.headers['transfer-encoding']).toBe('chunked');
    expect(saved.headers['content-length']).toBeUndefined();
    const meta = await inspectArchive(saved.body);
    expect(meta.Index).toBe(Number(saved.headers['x-registry-index']));
    // The checksums of meta.json and state.bin are checked as the archive is read.
    const { state } = await readArchive(saved.body);
    expect(state.length).toBe(meta.Size);
    expect(meta.Size).toBeGreaterThan(6 * 1024 * 1024);
  }
  expect(await eventually(async () => s.saves().length === 0, 5_000)).toBe(true);
  expect(s.log()).not.toMatch(/uncaught|unhandled/i);
  // The archive restores (the same state back).
  const saved = await get(s.proc.httpPort, '/v1/snapshot');
  expect((await s.call('PUT', '/v1/snapshot', saved.body)).status).toBe(200);
  expect((await s.call('GET', '/v1/kv/big/01535')).status).toBe(200);
});

test('a client that leaves half-way: the spooled state is removed and the server saves again', async () => {
  const s = (server = await SingleServer.start('left-save'));
  await fill(s);
  expect(await getAndLeave(s.proc.httpPort, '/v1/snapshot')).toBe(200);
  expect(await eventually(async () => s.saves().length === 0, 10_000)).toBe(true);
  expect(s.log()).not.toMatch(/uncaught|unhandled/i);
  const again = await get(s.proc.httpPort, '/v1/snapshot');
  expect(again.status).toBe(200);
  expect((await inspectArchive(again.body)).Size).toBeGreaterThan(6 * 1024 * 1024);
  expect(s.alive).toBe(true);
});

test('a save a crash left half-sent is removed at the next start', async () => {
  const s = (server = await SingleServer.start('crashed-save', {}, [], (dataDir) => {
    mkdirSync(join(dataDir, 'snapshot-saves'), { recursive: true });
    writeFileSync(join(dataDir, 'snapshot-saves', 'save-1-abcdef.bin'), Buffer.alloc(1024));
  }));
  expect(s.saves()).toEqual([]);
});
