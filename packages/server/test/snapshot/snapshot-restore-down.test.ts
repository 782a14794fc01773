// A restore while a server is down: the others stage the state file and load it ahead of the entry,
// which names it, and apply the entry by swapping it in (snapshot/restore-staging.ts). Then each takes
// a snapshot and compacts its log through the entry (the entries before it built a state that is
// gone: RaftNode.discardLogThrough, issue #34), so the server that was down is sent that snapshot
// when it is back, and a server restarted afterwards loads its own. (One that meets the entry in its
// log instead — back before the leader compacted, or restarted before its own snapshot was written —
// fetches the staged file or loads its own: restore-staging.test.ts.) Every server ends with the
// same state, and writes go on.
import { request } from 'node:http';
import { eventually } from '../support/wait';
import { ClusterHarness } from '../cluster/support/cluster-harness';

jest.setTimeout(180_000);

let cluster: ClusterHarness | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

function binary(port: number, method: string, path: string, body?: Buffer): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function view(c: ClusterHarness, i: number): Promise<string> {
  const parts: unknown[] = [];
  for (const path of ['/v1/kv/?recurse', '/v1/catalog/service/web']) {
    const r = await c.http(i, 'GET', `${path}${path.includes('?') ? '&' : '?'}stale`);
    parts.push([path, r.status, r.status === 200 ? r.json() : r.body]);
  }
  return JSON.stringify(parts);
}

test('a server down during a restore is sent the restored state as a snapshot when it is back; a restart loads its own; all end identical', async () => {
  const c = (cluster = await ClusterHarness.start({ size: 3 }));
  const leader = await c.waitForLeader(15_000);
  const [up, down] = [0, 1, 2].filter((i) => i !== leader);
  const ok = (r: { status: number; body: string }) => expect([r.status, r.body]).toEqual([200, 'true']);
  for (let i = 0; i < 20; i++) ok(await c.http(leader, 'PUT', '/v1/catalog/register', { Node: `web-${i}`, Address: `10.0.0.${i}`, Service: { Service: 'web', Port: 80 + i } }));
  ok(await c.http(leader, 'PUT', '/v1/kv/app/version', 'saved'));
  const save = await binary(c.servers[leader].httpPort, 'GET', '/v1/snapshot');
  expect(save.status).toBe(200);
  await eventually(async () => (await view(c, down)) === (await view(c, leader)), 15_000);
  const saved = await view(c, leader);

  ok(await c.http(leader, 'PUT', '/v1/kv/app/version', 'later'));
  ok(await c.http(leader, 'PUT', '/v1/catalog/deregister', { Node: 'web-3' }));
  await c.kill(down, 'SIGKILL');

  const restore = await binary(c.servers[up].httpPort, 'PUT', '/v1/snapshot', save.body);
  expect([restore.status, restore.body.toString()]).toEqual([200, '']);
  expect(c.logs(up)).toMatch(/state staged and loaded ahead of the entry: staged=2\/3/);
  expect(await eventually(async () => (await view(c, up)) === saved && (await view(c, leader)) === saved, 15_000)).toBe(true);

  await c.restart(down);
  const caughtUp = await eventually(async () => (await view(c, down)) === saved, 30_000);
  if (!caughtUp) throw new Error(`s${down} did not catch up:\n${c.diagnostics()}`);
  expect(c.logs(down)).toMatch(/raft: installed snapshot/);
  expect(c.logs(down)).not.toMatch(/staged state fetched/);
  for (const i of [leader, up]) expect(c.logs(i)).toMatch(/raft: took snapshot/);
  // A restart loads the snapshot taken after the restore.
  await c.kill(up, 'SIGKILL');
  await c.restart(up);
  const reloaded = await eventually(async () => (await view(c, up).catch(() => '')) === saved, 30_000);
  if (!reloaded) throw new Error(`s${up} did not come back with the restored state:\n${c.diagnostics()}`);
  expect(c.logs(up)).not.toMatch(/staged state fetched/);
  // Writes go on alike everywhere.
  ok(await c.http(down, 'PUT', '/v1/kv/app/after', 'x'));
  const after = await eventually(async () => {
    const views = await Promise.all([0, 1, 2].map((i) => view(c, i)));
    return views.every((v) => v === views[0]) && views[0].includes('app/after');
  }, 15_000);
  expect(after).toBe(true);
});
