// Backups on a three-server cluster: an archive saved through a follower, more writes, a restore
// through another follower, and every server reads back exactly the saved state; damaged archives
// (a flipped byte, a truncated file) are refused with 400 and change nothing.
import { request } from 'node:http';
import { inspectArchive, writeArchive } from '../../src/snapshot/archive';
import { eventually } from '../support/wait';
import { ClusterHarness } from '../cluster/support/cluster-harness';

jest.setTimeout(180_000);

let cluster: ClusterHarness | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

interface BinaryAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function binary(port: number, method: string, path: string, body?: Buffer): Promise<BinaryAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** What a server holds, read from its own store (?stale): KV, catalog, health and sessions, with their indexes. */
async function view(c: ClusterHarness, i: number): Promise<string> {
  const parts: unknown[] = [];
  for (const path of ['/v1/kv/?recurse', '/v1/catalog/nodes', '/v1/catalog/services', '/v1/catalog/service/web', '/v1/health/state/any', '/v1/session/list']) {
    const r = await c.http(i, 'GET', `${path}${path.includes('?') ? '&' : '?'}stale`);
    parts.push([path, r.status, r.status === 200 ? r.json() : r.body]);
  }
  return JSON.stringify(parts);
}

async function allViews(c: ClusterHarness): Promise<string[]> {
  return Promise.all([0, 1, 2].map((i) => view(c, i)));
}

/** Every server shows the same thing; returns it. */
async function converged(c: ClusterHarness): Promise<string> {
  let seen = '';
  const ok = await eventually(async () => {
    const views = await allViews(c);
    seen = views[0];
    return views.every((v) => v === views[0]);
  }, 15_000);
  if (!ok) throw new Error(`servers did not converge:\n${c.diagnostics()}`);
  return seen;
}

test('save through a follower, write more, restore through another follower: every server ends with exactly the saved state', async () => {
  const c = (cluster = await ClusterHarness.start({ size: 3 }));
  const leader = await c.waitForLeader(15_000);
  const [f1, f2] = [0, 1, 2].filter((i) => i !== leader);
  const ok = (r: { status: number; body: string }) => expect([r.status, r.body]).toEqual([200, 'true']);

  // The state to save: KV, catalog, a session holding a lock.
  ok(await c.http(leader, 'PUT', '/v1/kv/app/config', 'v1'));
  ok(await c.http(f1, 'PUT', '/v1/kv/app/keep', 'kept'));
  ok(await c.http(f1, 'PUT', '/v1/catalog/register', { Node: 'web-1', Address: '10.0.0.1', Service: { Service: 'web', Port: 80 } }));
  await eventually(async () => (await c.http(leader, 'GET', '/v1/catalog/node/s0')).status === 200, 10_000);
  const session = (await c.http(leader, 'PUT', '/v1/session/create', { Node: `s${leader}`, Name: 'saved' })).json<{ ID: string }>().ID;
  ok(await c.http(leader, 'PUT', `/v1/kv/app/lock?acquire=${session}`, 'held'));
  const saved = await converged(c);

  const save = await binary(c.servers[f1].httpPort, 'GET', '/v1/snapshot');
  expect(save.status).toBe(200);
  const index = Number(save.headers['x-registry-index']);
  expect(index).toBeGreaterThan(0);
  const meta = await inspectArchive(save.body);
  expect(meta).toMatchObject({ Format: 'registry-snapshot', Version: 1, Index: index, Datacenter: 'dc1' });
  expect(meta.Term).toBeGreaterThan(0);
  expect(meta.Checksum).toMatch(/^sha256:[0-9a-f]{64}$/);
  // Nothing was written between converging and saving: the archive is that state.
  expect(await view(c, leader)).toBe(saved);

  // More writes of every kind: changed, added and deleted keys, a new node, the session gone.
  ok(await c.http(f2, 'PUT', '/v1/kv/app/config', 'v2'));
  ok(await c.http(f2, 'PUT', '/v1/kv/app/new', 'new'));
  ok(await c.http(f2, 'DELETE', '/v1/kv/app/keep'));
  ok(await c.http(f1, 'PUT', '/v1/catalog/register', { Node: 'web-2', Address: '10.0.0.2', Service: { Service: 'web', Port: 81 } }));
  ok(await c.http(leader, 'PUT', `/v1/session/destroy/${session}`));
  const later = await converged(c);
  expect(later).not.toBe(saved);

  // A flipped byte and a truncated archive: 400 with a reason, nothing changes.
  const flipped = Buffer.from(save.body);
  flipped[Math.floor(flipped.length / 2)] ^= 0xff;
  const bad = await binary(c.servers[f2].httpPort, 'PUT', '/v1/snapshot', flipped);
  expect(bad.status).toBe(400);
  expect(bad.body.toString()).toMatch(/gzip|checksum|tar|corrupt/i);
  const cut = await binary(c.servers[leader].httpPort, 'PUT', '/v1/snapshot', save.body.subarray(0, Math.floor(save.body.length * 0.7)));
  expect(cut.status).toBe(400);
  expect(cut.body.toString()).toMatch(/gzip|truncated|end of file|tar/i);
  const empty = await binary(c.servers[leader].httpPort, 'PUT', '/v1/snapshot', Buffer.alloc(0));
  expect(empty.status).toBe(400);
  // Good checksums around a state.bin that is not a state: refused before anything is proposed.
  const notState = await writeArchive(Buffer.from('not a registry state'), { index: 1, term: 1, datacenter: 'dc1' });
  const refused = await binary(c.servers[f1].httpPort, 'PUT', '/v1/snapshot', notState);
  expect(refused.status).toBe(400);
  expect(refused.body.toString()).toMatch(/snapshot restore refused: not a registry state snapshot/);
  expect(await allViews(c)).toEqual([later, later, later]);

  // The real restore, through a follower: every server ends with the saved state, indexes included.
  const restore = await binary(c.servers[f2].httpPort, 'PUT', '/v1/snapshot', save.body);
  expect([restore.status, restore.body.toString()]).toEqual([200, '']);
  expect(await converged(c)).toBe(saved);
  // Every server had the state file and had decoded and loaded it before the entry came (it only swapped it in).
  expect(c.logs(f2)).toMatch(/snapshot restore: state staged and loaded ahead of the entry: staged=3\/3/);

  // The cluster goes on writing after a restore, on every server.
  ok(await c.http(f1, 'PUT', '/v1/kv/app/after', 'x'));
  await converged(c);
  expect((await c.http(f2, 'GET', '/v1/kv/app/after?raw&stale')).body).toBe('x');
});
