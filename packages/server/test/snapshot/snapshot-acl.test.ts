// Saving and restoring a snapshot is management's alone (Consul: acl = "write"): an anonymous or
// read-only token gets 403 for both, and a restore refused by ACL changes nothing.
import { startDevAgent, http, type TestAgent } from '../support/dev-agent';

jest.setTimeout(60_000);

const MGMT = 'b1c2d3e4-0000-4000-8000-00000000a11c';
let agent: TestAgent | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

async function bytes(url: string, method: string, path: string, token?: string, body?: Buffer): Promise<{ status: number; body: Buffer; text: string }> {
  const res = await fetch(url + path, { method, headers: token ? { 'X-Registry-Token': token } : {}, body });
  const b = Buffer.from(await res.arrayBuffer());
  return { status: res.status, body: b, text: b.toString() };
}

test('GET and PUT /v1/snapshot need a management token', async () => {
  agent = await startDevAgent((c) => {
    c.acl = { ...c.acl, enabled: true, defaultPolicy: 'deny', tokens: { initialManagement: MGMT } };
  });
  const { url } = agent;
  const mgmt = { 'X-Registry-Token': MGMT };
  expect((await http(url, 'PUT', '/v1/kv/before', 'saved', mgmt)).status).toBe(200);
  // A token that may read and write every key, but is not management.
  const policy = await http(url, 'PUT', '/v1/acl/policy', { Name: 'kv-all', Rules: 'key_prefix "" { policy = "write" }' }, mgmt);
  expect(policy.status).toBe(200);
  const token = await http(url, 'PUT', '/v1/acl/token', { Policies: [{ ID: policy.json.ID }] }, mgmt);
  const kvToken = token.json.SecretID as string;

  expect((await bytes(url, 'GET', '/v1/snapshot')).status).toBe(403);
  expect((await bytes(url, 'GET', '/v1/snapshot', kvToken)).status).toBe(403);
  const saved = await bytes(url, 'GET', '/v1/snapshot', MGMT);
  expect(saved.status).toBe(200);

  expect((await http(url, 'PUT', '/v1/kv/after', 'later', mgmt)).status).toBe(200);
  expect((await bytes(url, 'PUT', '/v1/snapshot', undefined, saved.body)).status).toBe(403);
  expect((await bytes(url, 'PUT', '/v1/snapshot', kvToken, saved.body)).status).toBe(403);
  expect((await http(url, 'GET', '/v1/kv/after?raw', undefined, mgmt)).text).toBe('later');

  expect((await bytes(url, 'PUT', '/v1/snapshot', MGMT, saved.body)).status).toBe(200);
  expect((await http(url, 'GET', '/v1/kv/after', undefined, mgmt)).status).toBe(404);
  expect((await http(url, 'GET', '/v1/kv/before?raw', undefined, mgmt)).text).toBe('saved');
});
