// Issue #34: a snapshot archive says which version it is (meta.json `Version`, and the state's own
// `version` inside state.bin), and a registry refuses one newer than it reads — `snapshot restore`
// and `snapshot inspect` exit non-zero with a message naming both versions — and changes nothing.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Packr } from 'msgpackr';
import { extract, pack } from 'tar-stream';
import { http, startDevAgent, type TestAgent } from '../../server/test/support/dev-agent';
import { cli } from './support/cli';

jest.setTimeout(60_000);

let t: TestAgent;
let env: Record<string, string>;
let dir: string;
beforeAll(async () => {
  t = await startDevAgent();
  env = { REGISTRY_HTTP_ADDR: `127.0.0.1:${t.agent.httpPort}` };
  dir = mkdtempSync(join(tmpdir(), 'snap-version-'));
});
afterAll(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});
const run = (...args: string[]) => cli(args, { env });

async function members(file: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const x = extract();
  x.on('entry', (h, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: unknown) => chunks.push(c as Buffer));
    stream.on('end', () => {
      out.set(h.name, Buffer.concat(chunks));
      next();
    });
  });
  const done = new Promise<void>((r, j) => {
    x.on('finish', r);
    x.on('error', j);
  });
  x.end(gunzipSync(readFileSync(file)));
  await done;
  return out;
}

/** The archive of `meta` and `state`, with right checksums (a well-formed archive of another version). */
async function archive(meta: Record<string, unknown>, state: Buffer): Promise<Buffer> {
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const m = Buffer.from(JSON.stringify({ ...meta, Size: state.length, Checksum: `sha256:${sha(state)}` }));
  const sums = Buffer.from(`${sha(m)}  meta.json\n${sha(state)}  state.bin\n`);
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => tar.on('end', r));
  tar.entry({ name: 'meta.json' }, m);
  tar.entry({ name: 'state.bin' }, state);
  tar.entry({ name: 'SHA256SUMS' }, sums);
  tar.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

test('an archive or a state of a newer version is refused by restore and inspect, naming both versions', async () => {
  await http(t.url, 'PUT', '/v1/kv/kept', 'before');
  const file = join(dir, 'backup.snap');
  expect((await run('snapshot', 'save', file)).code).toBe(0);
  const saved = await members(file);
  const meta = JSON.parse(saved.get('meta.json')!.toString()) as Record<string, unknown>;
  expect(meta.Version).toBe(1);
  await http(t.url, 'PUT', '/v1/kv/kept', 'after');

  const newerArchive = join(dir, 'newer-archive.snap');
  writeFileSync(newerArchive, await archive({ ...meta, Version: 2 }, saved.get('state.bin')!));
  const restored = await run('snapshot', 'restore', newerArchive);
  expect(restored.code).not.toBe(0);
  expect(restored.stderr).toMatch(/snapshot archive version 2 is newer than this registry reads \(archive version 1\)/);
  const inspected = await run('snapshot', 'inspect', newerArchive);
  expect(inspected.code).not.toBe(0);
  expect(inspected.stderr).toMatch(/snapshot archive version 2 is newer than this registry reads \(archive version 1\)/);

  // An archive of this version around a state of a newer one.
  const packr = new Packr({ useRecords: false });
  const state = packr.unpack(saved.get('state.bin')!) as Record<string, unknown>;
  const newerState = join(dir, 'newer-state.snap');
  writeFileSync(newerState, await archive(meta, Buffer.from(packr.pack({ ...state, version: 2 }))));
  const refused = await run('snapshot', 'restore', newerState);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/state snapshot format version 2 is newer than this registry reads \(state snapshot version 1\)/);

  // Nothing changed; the archive as saved still restores.
  expect((await (await fetch(`${t.url}/v1/kv/kept?raw`)).text())).toBe('after');
  expect((await run('snapshot', 'restore', file)).code).toBe(0);
  expect((await (await fetch(`${t.url}/v1/kv/kept?raw`)).text())).toBe('before');
});
