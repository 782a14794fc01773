// Issue 33, finding 3 (and issue 31's snapshot family): a restore reads its archive strictly, as
// Consul's reader — exactly meta.json, state.bin and SHA256SUMS, plain octal sizes within bounds,
// exact names, header checksums, end blocks, every sum verified — and refuses anything else with a
// 400 and a one-line reason within a second, whatever sizes the archive declares, keeping nothing.
// Each hostile kind (bench/snapshot/hostile-archives.js makes them from a good archive) is sent to
// a real server process, which must then still serve reads and writes. An archive from another
// cluster restores, as Consul's does (a backup is how a cluster is moved or rebuilt); a restore
// while writes run answers, and leaves the server consistent and serving.
import { waitFor } from '../support/dev-agent';
import { SingleServer } from './support/single-server';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { hostileArchives } = require('../../../../bench/snapshot/hostile-archives.js') as {
  hostileArchives(good: Buffer): Array<{ kind: string; archive: Buffer; reason: string }>;
};

jest.setTimeout(180_000);

const servers: SingleServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function start(name: string, extraArgs: string[] = []): Promise<SingleServer> {
  const s = await SingleServer.start(name, {}, extraArgs);
  servers.push(s);
  return s;
}

/** The server still takes a write and reads it back. */
async function serves(s: SingleServer, key: string): Promise<void> {
  expect(s.alive).toBe(true);
  const put = await s.call('PUT', `/v1/kv/probe/${key}`, Buffer.from(key));
  expect([put.status, put.text]).toEqual([200, 'true']);
  expect((await s.call('GET', `/v1/kv/probe/${key}?raw`)).text).toBe(key);
}

test('every hostile archive is refused with 400 and its reason within a second, and the server goes on', async () => {
  const s = await start('snap-hostile');
  expect((await s.call('PUT', '/v1/kv/before', Buffer.from('saved'))).status).toBe(200);
  const good = (await s.call('GET', '/v1/snapshot')).body;
  expect((await s.call('PUT', '/v1/kv/after', Buffer.from('later'))).status).toBe(200);

  const kinds = hostileArchives(good);
  expect(kinds.length).toBeGreaterThanOrEqual(15);
  let n = 0;
  for (const { kind, archive, reason } of kinds) {
    const answer = await s.call('PUT', '/v1/snapshot', archive);
    expect({ kind, status: answer.status, reason: answer.text.includes(reason) ? reason : answer.text }).toEqual({ kind, status: 400, reason });
    expect(answer.text).not.toContain('\n');
    expect({ kind, fast: answer.ms < 1_000 }).toEqual({ kind, fast: true });
    expect(s.uploads()).toEqual([]);
    await serves(s, `k${n++}`);
  }
  // Nothing of them was restored: the state is the one written last.
  expect((await s.call('GET', '/v1/kv/after?raw')).text).toBe('later');
  // And the good archive still restores.
  expect((await s.call('PUT', '/v1/snapshot', good)).status).toBe(200);
  expect((await s.call('GET', '/v1/kv/after')).status).toBe(404);
  expect((await s.call('GET', '/v1/kv/before?raw')).text).toBe('saved');
  await serves(s, 'end');
});

test('an archive from another cluster restores, as Consul takes one; the server goes on writing after it', async () => {
  const [here, other] = await Promise.all([start('snap-here'), start('snap-other', ['-datacenter', 'dc-other'])]);
  expect((await other.call('PUT', '/v1/kv/moved', Buffer.from('from the other cluster'))).status).toBe(200);
  // The archive holds the other server as its leader registers it (the registry service and the
  // serfHealth check, from its first server-health pass); a node its agent synced before that pass
  // is any catalog node, which a restore keeps, as Consul's reconcileReaped does.
  const registered = async () => {
    const entries = JSON.parse((await other.call('GET', '/v1/health/service/registry')).text) as Array<{ Node: { Node: string }; Checks: Array<{ CheckID: string }> }>;
    return entries.some((e) => e.Node.Node === 'snap-other' && e.Checks.some((c) => c.CheckID === 'serfHealth'));
  };
  await waitFor(registered, 15_000, 100);
  const archive = (await other.call('GET', '/v1/snapshot')).body;
  expect((await here.call('PUT', '/v1/kv/local', Buffer.from('x'))).status).toBe(200);

  const restored = await here.call('PUT', '/v1/snapshot', archive);
  expect([restored.status, restored.text]).toEqual([200, '']);
  expect((await here.call('GET', '/v1/kv/moved?raw')).text).toBe('from the other cluster');
  expect((await here.call('GET', '/v1/kv/local')).status).toBe(404);
  await serves(here, 'after-other');
  // Within a pass of the leader's server health (1 s): this server's own catalog entry is put back
  // (it is not in the other cluster's state), and the other cluster's server, which came with the
  // archive but is no member here, is reaped (Consul's reconcileReaped).
  const nodes = async () => (JSON.parse((await here.call('GET', '/v1/catalog/nodes')).text) as Array<{ Node: string }>).map((n) => n.Node).join(',');
  const deadline = Date.now() + 15_000;
  while ((await nodes()) !== 'snap-here' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  expect(await nodes()).toBe('snap-here');
});

test('a restore while writes run answers, and the server is consistent and serving after it', async () => {
  const s = await start('snap-busy');
  expect((await s.call('PUT', '/v1/kv/before', Buffer.from('saved'))).status).toBe(200);
  const good = (await s.call('GET', '/v1/snapshot')).body;

  let restoredAt = Infinity;
  const afterRestore: string[] = [];
  const statuses = new Map<number, number>();
  const writer = async (w: number) => {
    const until = Date.now() + 8_000;
    for (let i = 0; i < 2_000 && Date.now() < until; i++) {
      const key = `busy/${w}/${i}`;
      const startedAt = Date.now();
      const r = await s.call('PUT', `/v1/kv/${key}`, Buffer.from('v'));
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 200 && startedAt > restoredAt) afterRestore.push(key);
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  await new Promise((r) => setTimeout(r, 1_000));
  const restore = await s.call('PUT', '/v1/snapshot', good);
  restoredAt = Date.now();
  await Promise.all(writers);

  expect([restore.status, restore.text]).toEqual([200, '']);
  expect([...statuses.keys()]).toEqual([200]);
  expect(afterRestore.length).toBeGreaterThan(0);
  // The restored state, plus exactly the writes begun after the restore answered (and perhaps some
  // that were in flight during it): none of the acknowledged later ones is missing.
  expect((await s.call('GET', '/v1/kv/before?raw')).text).toBe('saved');
  const keys = JSON.parse((await s.call('GET', '/v1/kv/busy/?keys')).text) as string[];
  const present = new Set(keys);
  expect(afterRestore.filter((k) => !present.has(k))).toEqual([]);
  await serves(s, 'after-busy');
});
