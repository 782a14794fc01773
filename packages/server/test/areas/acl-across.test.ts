// Tokens travel with `?dc=`: dc1 (ACLs off) forwards to dc2 (ACLs on, default deny), and dc2
// decides with its own tokens — for Raft reads and writes and for area members alike.
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { MASTER, startAclAgent, type AclAgent } from '../acl/acl-agent';

let dc1: TestAgent;
let dc2: AclAgent;
let dc2Area: string;

const asMaster = { 'X-Registry-Token': MASTER };

beforeAll(async () => {
  [dc1, dc2] = await Promise.all([
    startDevAgent((c) => {
      c.datacenter = 'dc1';
      c.nodeName = 'plain';
    }),
    startAclAgent({ defaultPolicy: 'deny', patch: (c) => void (c.datacenter = 'dc2') }),
  ]);
  const area = await http(dc1.url, 'POST', '/v1/operator/area', { PeerDatacenter: 'dc2' });
  const joined = await http(dc1.url, 'PUT', `/v1/operator/area/${area.json.ID}/join`, [dc2.agent.self.address]);
  if (!joined.json?.[0]?.Joined) throw new Error(`join failed: ${joined.text}`);
  dc2Area = (await dc2.as(MASTER, 'POST', '/v1/operator/area', { PeerDatacenter: 'dc1' })).json.ID;
  await dc2.as(MASTER, 'PUT', '/v1/kv/secret', 'hidden');
}, 30_000);

afterAll(async () => {
  await Promise.all([dc1?.stop(), dc2?.stop()]);
});

test('a read for dc2 without a token is refused there; dc2\'s management token reads it', async () => {
  expect((await http(dc1.url, 'GET', '/v1/kv/secret?dc=dc2')).status).toBe(403);
  const r = await http(dc1.url, 'GET', '/v1/kv/secret?dc=dc2&raw', undefined, asMaster);
  expect(r.status).toBe(200);
  expect(r.text).toBe('hidden');
});

test('writes for dc2 are checked on dc2\'s leader', async () => {
  expect((await http(dc1.url, 'PUT', '/v1/kv/other?dc=dc2', 'x')).status).toBe(403);
  expect((await http(dc1.url, 'POST', '/v1/operator/area?dc=dc2', { PeerDatacenter: 'dc3' })).status).toBe(403);
  const made = await http(dc1.url, 'POST', '/v1/operator/area?dc=dc2', { PeerDatacenter: 'dc3' }, asMaster);
  expect(made.status).toBe(200);
  expect((await dc2.as(MASTER, 'GET', `/v1/operator/area/${made.json.ID}`)).json[0].PeerDatacenter).toBe('dc3');
  const coord = { Node: 'acl-agent', Coord: { Vec: [0, 0, 0, 0, 0, 0, 0, 0], Error: 1, Adjustment: 0, Height: 0 } };
  expect((await http(dc1.url, 'PUT', '/v1/coordinate/update?dc=dc2', coord)).status).toBe(403);
  expect((await http(dc1.url, 'PUT', '/v1/coordinate/update?dc=dc2', coord, asMaster)).status).toBe(200);
});

test('area members and join of dc2 need operator rights there', async () => {
  expect((await http(dc1.url, 'GET', `/v1/operator/area/${dc2Area}/members?dc=dc2`)).status).toBe(403);
  const members = await http(dc1.url, 'GET', `/v1/operator/area/${dc2Area}/members?dc=dc2`, undefined, asMaster);
  expect(members.status).toBe(200);
  expect(members.json.map((m: any) => m.Datacenter)).toContain('dc2');
  expect((await http(dc1.url, 'PUT', `/v1/operator/area/${dc2Area}/join?dc=dc2`, ['127.0.0.1:1'])).status).toBe(403);
});

test('an area made after the peer joined still links back (the peer\'s pings), and the datacenters list needs no token', async () => {
  await waitFor(async () => (await dc2.as(undefined, 'GET', '/v1/catalog/datacenters')).json.length === 2, 5_000);
  expect((await dc2.as(undefined, 'GET', '/v1/catalog/datacenters')).json).toEqual(['dc2', 'dc1']);
});
