// Issue 33, finding 2: whether a `PUT /v1/snapshot` may restore is decided from its headers (the
// token) before any of its body is read, and an allowed archive is written to a file in the data
// dir under `snapshot_restore_max_bytes`, never held in memory. ACLs on, default deny: two
// anonymous 200 MiB bodies are refused with 403 at once and the server's RSS barely moves; a
// management token's archive over the limit is refused with 413 and a reason, nothing left behind.
import { waitFor } from '../support/dev-agent';
import { SingleServer } from './support/single-server';

jest.setTimeout(120_000);

const MGMT = 'b1c2d3e4-0000-4000-8000-0000000b0d1e';
const LIMIT = 4 * 1024 * 1024;
let server: SingleServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

test('an anonymous restore is refused from its headers; an allowed one is bounded by snapshot_restore_max_bytes', async () => {
  const s = (server = await SingleServer.start('snap-limits', {
    acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: MGMT } },
    snapshot_restore_max_bytes: LIMIT,
  }));
  const mgmt = { 'X-Registry-Token': MGMT };
  // The initial management token is made by the leader once it is elected.
  await waitFor(async () => (await s.call('GET', '/v1/acl/token/self', undefined, mgmt)).status === 200, 20_000, 100);
  expect((await s.call('PUT', '/v1/kv/before', Buffer.from('saved'), mgmt)).status).toBe(200);
  const saved = await s.call('GET', '/v1/snapshot', undefined, mgmt);
  expect(saved.status).toBe(200);

  // Two anonymous 200 MiB bodies: 403 each, quickly, and the server's memory does not take them in.
  const rssBefore = s.rssBytes();
  for (let i = 0; i < 2; i++) {
    const refused = await s.call('PUT', '/v1/snapshot', { zeros: 200 * 1024 * 1024 });
    expect([refused.status, refused.text]).toEqual([403, 'Permission denied']);
    expect(refused.ms).toBeLessThan(5_000);
  }
  const grown = s.rssBytes() - rssBefore;
  expect(grown).toBeLessThan(32 * 1024 * 1024);

  // Allowed, but larger than the limit: 413 with the reason, by Content-Length (nothing read) ...
  const declared = await s.call('PUT', '/v1/snapshot', { zeros: LIMIT + 1 }, mgmt);
  expect(declared.status).toBe(413);
  expect(declared.text).toMatch(/snapshot archive is larger than 4194304 bytes \(snapshot_restore_max_bytes\)/);
  // ... and as it streams in, when the length is not declared (chunked).
  const chunked = await s.call('PUT', '/v1/snapshot', { zeros: LIMIT + (1 << 20) }, { ...mgmt, 'Transfer-Encoding': 'chunked' });
  expect(chunked.status).toBe(413);
  expect(chunked.text).toMatch(/larger than 4194304 bytes/);
  expect(s.uploads()).toEqual([]);

  // The server goes on: the archive within the limit restores, writes and reads are served.
  expect((await s.call('PUT', '/v1/kv/after', Buffer.from('later'), mgmt)).status).toBe(200);
  const restored = await s.call('PUT', '/v1/snapshot', saved.body, mgmt);
  expect([restored.status, restored.text]).toEqual([200, '']);
  expect((await s.call('GET', '/v1/kv/after', undefined, mgmt)).status).toBe(404);
  expect((await s.call('GET', '/v1/kv/before?raw', undefined, mgmt)).text).toBe('saved');
  expect(s.uploads()).toEqual([]);
  expect(s.alive).toBe(true);
});
