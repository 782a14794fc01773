// A restore's state staged on every server (snapshot/restore-staging.ts), over an in-memory server
// port: the file reaches each server in pieces, is verified and loaded there; a server that was cut
// off fetches it and loads it when its entry comes; pieces that do not add up to the key are refused
// and leave nothing; a file goes only once its entry has left the log and 10 minutes have passed
// since it was applied (an hour for one never applied). Every store ends with the saved state.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryNetwork, type ServerInfo } from '@registry/raft';
import { Store } from '@registry/store';
import { RestoreStaging, STAGED_DIR } from '../../src/snapshot/restore-staging';

jest.setTimeout(60_000);

const bytes = (t: string) => new TextEncoder().encode(t);

/** The keys under app/, each with its flags and a digest of its value (a deep compare of 12 MiB of bytes takes a minute). */
function kvView(s: Store): string[] {
  return s.kvList('app/').value.map((e) => `${e.Key} ${e.Flags} ${createHash('sha256').update(e.Value ?? new Uint8Array()).digest('hex')}`);
}

/** A saved state of `n` KV keys of 4 KiB, its bytes and key. */
function savedState(n: number): { state: Uint8Array; key: string; view: string[] } {
  const s = new Store({ datacenter: 'dc1' });
  for (let i = 0; i < n; i++) s.apply(i + 1, { type: 'kv.apply', op: { Verb: 'set', Key: `app/${i}`, Value: Buffer.alloc(4096, i % 251), Flags: i } } as never);
  const state = s.snapshot();
  return { state, key: `sha256:${createHash('sha256').update(state).digest('hex')}`, view: kvView(s) };
}

interface Server {
  id: string;
  dir: string;
  store: Store;
  staging: RestoreStaging;
  firstLogIndex: number;
}

const dirs: string[] = [];
const stagings: RestoreStaging[] = [];
afterEach(() => {
  for (const s of stagings.splice(0)) s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function servers(network: InMemoryNetwork, ids: string[], up: string[] = ids): Server[] {
  const infos: ServerInfo[] = ids.map((id) => ({ id, address: `${id}:8300` }));
  return up.map((id) => {
    const dir = mkdtempSync(join(tmpdir(), `staging-${id}-`));
    dirs.push(dir);
    const store = new Store({ datacenter: 'dc1' });
    const server: Server = { id, dir, store, firstLogIndex: 1, staging: undefined as never };
    server.staging = new RestoreStaging({
      dataDir: dir, store, transport: network.transport(`${id}:8300`),
      selfId: () => id, servers: () => infos, firstLogIndex: () => server.firstLogIndex,
    });
    stagings.push(server.staging);
    return server;
  });
}

const stagedFiles = (s: Server) => (existsSync(join(s.dir, STAGED_DIR)) ? readdirSync(join(s.dir, STAGED_DIR)).sort() : []);

test('staged on every server reachable, fetched by one that was not; each applies the same state', async () => {
  const network = new InMemoryNetwork();
  const { state, key, view } = savedState(3000); // ~12 MiB: more than one 4 MiB piece, read into arenas
  expect(view).toHaveLength(3000);
  const [a, b] = servers(network, ['a', 'b', 'c'], ['a', 'b']);
  for (const s of [a, b]) await s.staging.start();
  const upload = join(a.dir, 'state.bin');
  writeFileSync(upload, state);
  await a.staging.adopt(upload, key);

  // c is not on the network: the others go on without it, after a grace.
  expect(await a.staging.stageEverywhere(key, state.length, 10_000)).toBeNull();
  for (const s of [a, b]) {
    expect(s.store.hasPrepared(key)).toBe(true);
    expect(stagedFiles(s)).toEqual([`${key.slice(7)}.bin`]);
  }

  // c comes up; its entry needs the state: fetched from a or b, verified, loaded.
  const [c] = servers(network, ['a', 'b', 'c'], ['c']);
  await c.staging.start();
  await c.staging.ensure(key, state.length);
  expect(c.store.hasPrepared(key)).toBe(true);
  expect(stagedFiles(c)).toEqual([`${key.slice(7)}.bin`]);

  for (const s of [a, b, c]) {
    expect(s.store.apply(5, { type: 'snapshot.restore', staged: key, bytes: state.length })).toBe(true);
    expect(kvView(s.store)).toEqual(view);
  }
});

test('pieces that do not add up to their key are refused, and a bad key names no file', async () => {
  const network = new InMemoryNetwork();
  const [a] = servers(network, ['a']);
  await a.staging.start();
  const caller = network.transport('x:1');
  const { state, key } = savedState(10);
  const wrong = Uint8Array.from(state);
  wrong[100] ^= 1;
  await expect(caller.call('a:8300', 'snapshot.stage', { key, size: wrong.length, offset: 0, data: wrong })).rejects.toThrow(/does not match its checksum/);
  await expect(caller.call('a:8300', 'snapshot.stage', { key: 'sha256:../../etc', size: 3, offset: 0, data: bytes('abc') })).rejects.toThrow(/sha256:<64 hex digits>/);
  await expect(caller.call('a:8300', 'snapshot.stage', { key, size: state.length, offset: 64, data: state })).rejects.toThrow(/not being received at offset 64/);
  await expect(caller.call('a:8300', 'snapshot.fetch', { key, offset: 0, length: 10 })).rejects.toThrow(/not staged here/);
  expect(stagedFiles(a)).toEqual([]);
  expect(a.store.hasPrepared(key)).toBe(false);
  // The whole of it, in one piece: kept and loaded.
  await expect(caller.call('a:8300', 'snapshot.stage', { key, size: state.length, offset: 0, data: state })).resolves.toBe('loaded');
  expect(a.store.hasPrepared(key)).toBe(true);
});

test('a file stays while its entry is in the log and for 10 minutes after it was applied; one never applied, an hour', async () => {
  const network = new InMemoryNetwork();
  const [a, b] = servers(network, ['a', 'b']);
  for (const s of [a, b]) await s.staging.start();
  const { state, key } = savedState(10);
  const upload = join(a.dir, 'state.bin');
  writeFileSync(upload, state);
  await a.staging.adopt(upload, key);
  expect(await a.staging.stageEverywhere(key, state.length, 10_000)).toBeNull();
  const file = `${key.slice(7)}.bin`;

  // a applied the entry at index 7; b never did.
  expect(a.store.apply(7, { type: 'snapshot.restore', staged: key, bytes: state.length })).toBe(true);
  a.staging.applied(key, 7);
  await new Promise((r) => setTimeout(r, 100));
  const minutes = (m: number) => Date.now() + m * 60_000;

  a.firstLogIndex = 5; // the entry is still in the log
  await a.staging.sweep(minutes(61));
  expect(stagedFiles(a)).toContain(file);
  a.firstLogIndex = 8; // compacted away, but applied only now
  await a.staging.sweep(minutes(1));
  expect(stagedFiles(a)).toContain(file);
  await a.staging.sweep(minutes(11));
  expect(stagedFiles(a)).toEqual([]);

  await b.staging.sweep(minutes(30));
  expect(stagedFiles(b)).toEqual([file]);
  await b.staging.sweep(minutes(61));
  expect(stagedFiles(b)).toEqual([]);
});
