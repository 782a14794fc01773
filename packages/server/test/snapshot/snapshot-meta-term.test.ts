// A backup's meta.json names the Raft index its state stands at and the term of the entry at that
// index (as Consul's snapshot meta does). From outside, the two terms part only between a new
// leader's no-op and its first write; a restarted server writes at once (its own catalog entries),
// so this pins the pair across a term change rather than that window.
import { request } from 'node:http';
import { inspectArchive, type ArchiveMeta } from '../../src/snapshot/archive';
import { ClusterHarness } from '../cluster/support/cluster-harness';

jest.setTimeout(120_000);

let cluster: ClusterHarness | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

function save(port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/snapshot', agent: false, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`GET /v1/snapshot: ${res.statusCode} ${Buffer.concat(chunks).toString()}`))));
    });
    req.on('timeout', () => req.destroy(new Error('GET /v1/snapshot timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** The highest term server 0 has logged itself leading or following a leader in. */
function loggedTerm(c: ClusterHarness): number {
  let term = 0;
  for (const m of c.logs(0).matchAll(/\bterm=(\d+)/g)) term = Math.max(term, Number(m[1]));
  return term;
}

test('meta.json names the saved index and the term of the entry there, across a term change', async () => {
  const c = (cluster = await ClusterHarness.start({ size: 1 }));
  await c.waitForLeader(15_000);
  expect((await c.http(0, 'PUT', '/v1/kv/saved', 'x')).body).toBe('true');
  const before: ArchiveMeta = await inspectArchive(await save(c.servers[0].httpPort));
  expect(before.Term).toBeGreaterThan(0);

  expect(before.Term).toBe(loggedTerm(c));

  // Restarted on its data dir: it leads in a higher term, and a write made in that term moves the
  // index and names the new term.
  await c.kill(0, 'SIGTERM');
  await c.restart(0);
  await c.waitForLeader(20_000);
  expect(loggedTerm(c)).toBeGreaterThan(before.Term);
  expect((await c.http(0, 'PUT', '/v1/kv/later', 'y')).body).toBe('true');
  const later = await inspectArchive(await save(c.servers[0].httpPort));
  expect(later.Index).toBeGreaterThan(before.Index);
  expect(later.Term).toBe(loggedTerm(c));
  expect(later.ID.startsWith(`${later.Term}-${later.Index}-`)).toBe(true);
});
