// Two single-server datacenters (dc1, dc2) in one process, linked by network areas and driven only
// through HTTP: area CRUD and validation, RetryJoin and join results, members, `?dc=` reads and
// writes in both directions, the datacenters list, address translation, prepared-query failover,
// and, last, a peer going away (members failed, no path).
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

let dc1: TestAgent;
let dc2: TestAgent;
/** Server RPC addresses ("127.0.0.1:port"). */
let dc1Server: string;
let dc2Server: string;
let area1: string; // dc1's area for dc2
let area2: string; // dc2's area for dc1

const get = (a: TestAgent, path: string) => http(a.url, 'GET', path);

beforeAll(async () => {
  [dc1, dc2] = await Promise.all([
    startDevAgent((c) => {
      c.datacenter = 'dc1';
      c.nodeName = 'alpha';
      c.translateWanAddrs = true;
    }),
    startDevAgent((c) => {
      c.datacenter = 'dc2';
      c.nodeName = 'beta';
    }),
  ]);
  dc1Server = dc1.agent.self.address;
  dc2Server = dc2.agent.self.address;
}, 30_000);

afterAll(async () => {
  await Promise.all([dc1?.stop(), dc2?.stop()]);
});

describe('area CRUD and validation', () => {
  test('create refuses a missing peer, the local datacenter and a second area for the same peer', async () => {
    expect((await http(dc1.url, 'POST', '/v1/operator/area', {})).status).toBe(400);
    const own = await http(dc1.url, 'POST', '/v1/operator/area', { PeerDatacenter: 'dc1' });
    expect(own.status).toBe(400);
    expect(own.text).toContain('local datacenter');
    const bad = await http(dc1.url, 'POST', '/v1/operator/area', { PeerDatacenter: 'dc9', RetryJoin: ['host:notaport'] });
    expect(bad.status).toBe(400);

    const made = await http(dc1.url, 'POST', '/v1/operator/area', { PeerDatacenter: 'dc3' });
    expect(made.status).toBe(200);
    expect(made.json.ID).toMatch(/^[0-9a-f-]{36}$/);
    const again = await http(dc1.url, 'POST', '/v1/operator/area', { peerdatacenter: 'dc3' });
    expect(again.status).toBe(400);
    expect(again.text).toContain('already exists');
    expect((await http(dc1.url, 'DELETE', `/v1/operator/area/${made.json.ID}`)).status).toBe(200);
  });

  test('list, read one (an array), update UseTLS and delete; unknown IDs are 404', async () => {
    const made = await http(dc1.url, 'POST', '/v1/operator/area', { PeerDatacenter: 'dc4', RetryJoin: null, UseTLS: false });
    const id = made.json.ID;
    const list = await get(dc1, '/v1/operator/area');
    expect(list.status).toBe(200);
    expect(Number(list.headers.get('x-registry-index'))).toBeGreaterThan(0);
    expect(list.json).toContainEqual({ ID: id, PeerDatacenter: 'dc4', RetryJoin: null, UseTLS: false });

    const upd = await http(dc1.url, 'PUT', `/v1/operator/area/${id}`, { UseTLS: true });
    expect(upd.status).toBe(200);
    expect(upd.json).toEqual({ ID: id });
    expect((await get(dc1, `/v1/operator/area/${id}`)).json).toEqual([{ ID: id, PeerDatacenter: 'dc4', RetryJoin: null, UseTLS: true }]);

    expect((await http(dc1.url, 'DELETE', `/v1/operator/area/${id}`)).status).toBe(200);
    expect((await get(dc1, `/v1/operator/area/${id}`)).status).toBe(404);
    expect((await http(dc1.url, 'DELETE', `/v1/operator/area/${id}`)).status).toBe(404);
    expect((await http(dc1.url, 'PUT', `/v1/operator/area/${id}`, { UseTLS: true })).status).toBe(404);
    expect((await http(dc1.url, 'PUT', `/v1/operator/area/${id}/join`, [dc2Server])).status).toBe(404);
    expect((await get(dc1, `/v1/operator/area/${id}/members`)).status).toBe(404);
  });

  test('a blocking area list wakes on an area write', async () => {
    const first = await get(dc1, '/v1/operator/area');
    const index = first.headers.get('x-registry-index');
    const started = Date.now();
    const blocked = get(dc1, `/v1/operator/area?index=${index}&wait=5s`);
    await new Promise((r) => setTimeout(r, 100));
    const made = await http(dc1.url, 'POST', '/v1/operator/area', { PeerDatacenter: 'dc5' });
    const woke = await blocked;
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(woke.json.map((a: { ID: string }) => a.ID)).toContain(made.json.ID);
    await http(dc1.url, 'DELETE', `/v1/operator/area/${made.json.ID}`);
  });
});

describe('linking dc1 and dc2', () => {
  test('RetryJoin: dc2 keeps joining dc1 in the background until it succeeds', async () => {
    const made = await http(dc2.url, 'POST', '/v1/operator/area', { PeerDatacenter: 'dc1', RetryJoin: [dc1Server] });
    expect(made.status).toBe(200);
    area2 = made.json.ID;
    await waitFor(async () => (await get(dc2, `/v1/operator/area/${area2}/members`)).json.some((m: any) => m.Datacenter === 'dc1'), 10_000);
  });

  test('join reports each address: the peer joins; a dead port, a server of the wrong datacenter and a bad address do not', async () => {
    area1 = (await http(dc1.url, 'POST', '/v1/operator/area', { PeerDatacenter: 'dc2' })).json.ID;
    const r = await http(dc1.url, 'PUT', `/v1/operator/area/${area1}/join`, [dc2Server, '127.0.0.1:1', dc1Server, 'no such:host:x']);
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(4);
    expect(r.json[0]).toEqual({ Address: dc2Server, Joined: true, Error: '' });
    for (const failed of r.json.slice(1)) {
      expect(failed.Joined).toBe(false);
      expect(failed.Error).not.toBe('');
    }
    expect(r.json[2].Error).toContain('this datacenter');
  });

  test('members list both datacenters\' servers with `node.dc` names, ports, status and RTT', async () => {
    const r = await get(dc1, `/v1/operator/area/${area1}/members`);
    expect(r.status).toBe(200);
    const byName = Object.fromEntries(r.json.map((m: any) => [m.Name, m]));
    expect(Object.keys(byName).sort()).toEqual(['alpha.dc1', 'beta.dc2']);
    const beta = byName['beta.dc2'];
    expect(beta).toMatchObject({ ID: dc2.agent.nodeId, Addr: '127.0.0.1', Port: Number(dc2Server.split(':')[1]), Datacenter: 'dc2', Role: 'server', Protocol: 2, Status: 'alive' });
    expect(typeof beta.Build).toBe('string');
    expect(Number.isInteger(beta.RTT)).toBe(true);
    expect(beta.RTT).toBeGreaterThanOrEqual(0);
    expect(byName['alpha.dc1']).toMatchObject({ Datacenter: 'dc1', Status: 'alive', RTT: 0 });
    // Pings soon give the peer a measured round trip.
    await waitFor(async () => (await get(dc1, `/v1/operator/area/${area1}/members`)).json.find((m: any) => m.Name === 'beta.dc2').RTT > 0, 5_000);
  });

  test('each datacenter lists itself first, then the one it reaches', async () => {
    expect((await get(dc1, '/v1/catalog/datacenters')).json).toEqual(['dc1', 'dc2']);
    expect((await get(dc2, '/v1/catalog/datacenters')).json).toEqual(['dc2', 'dc1']);
  });
});

describe('?dc= across the link', () => {
  test('writes and reads go to the other datacenter, in both directions', async () => {
    expect((await http(dc1.url, 'PUT', '/v1/kv/shared/key?dc=dc2', 'from-dc1')).json).toBe(true);
    const there = await get(dc2, '/v1/kv/shared/key?raw');
    expect(there.text).toBe('from-dc1');
    expect((await get(dc1, '/v1/kv/shared/key')).status).toBe(404);

    const via = await get(dc1, '/v1/kv/shared/key?dc=dc2');
    expect(via.status).toBe(200);
    expect(Buffer.from(via.json[0].Value, 'base64').toString()).toBe('from-dc1');
    expect(via.headers.get('x-registry-index')).toBe(there.headers.get('x-registry-index'));

    const reg = await http(dc2.url, 'PUT', '/v1/catalog/register?dc=dc1', { Node: 'ext-1', Address: '10.1.0.1' });
    expect(reg.status).toBe(200);
    expect((await get(dc1, '/v1/catalog/node/ext-1')).json.Node.Datacenter).toBe('dc1');
    // The body's Datacenter routes a write too.
    expect((await http(dc1.url, 'PUT', '/v1/catalog/register', { Node: 'ext-2', Address: '10.2.0.2', Datacenter: 'dc2' })).status).toBe(200);
    expect((await get(dc2, '/v1/catalog/node/ext-2')).json.Node.Datacenter).toBe('dc2');
  });

  test('errors of the other datacenter come back with their status', async () => {
    expect((await http(dc1.url, 'POST', '/v1/operator/area?dc=dc2', { PeerDatacenter: 'dc2' })).status).toBe(400);
    expect((await get(dc1, '/v1/query/00000000-0000-4000-8000-000000000000?dc=dc2')).status).toBe(404);
  });

  test('a blocking read in the other datacenter wakes on its write', async () => {
    const first = await get(dc1, '/v1/kv/block/me?dc=dc2');
    const index = first.headers.get('x-registry-index');
    const blocked = get(dc1, `/v1/kv/block/me?dc=dc2&index=${index}&wait=5s`);
    await new Promise((r) => setTimeout(r, 150));
    await http(dc2.url, 'PUT', '/v1/kv/block/me', 'v');
    const woke = await blocked;
    expect(woke.status).toBe(200);
    expect(Number(woke.headers.get('x-registry-index'))).toBeGreaterThan(Number(index));
  });

  test('area members of the other datacenter are answered by it', async () => {
    const r = await get(dc1, `/v1/operator/area/${area2}/members?dc=dc2`);
    expect(r.status).toBe(200);
    expect(r.json.map((m: any) => m.Name).sort()).toEqual(['alpha.dc1', 'beta.dc2']);
  });

  test('an unknown datacenter has no path', async () => {
    const r = await get(dc1, '/v1/catalog/nodes?dc=dc7');
    expect(r.status).toBe(500);
    expect(r.text).toBe('No path to datacenter');
    expect((await http(dc1.url, 'PUT', '/v1/kv/x?dc=dc7', 'v')).text).toBe('No path to datacenter');
  });
});

describe('translate_wan_addrs (on in dc1 only)', () => {
  beforeAll(async () => {
    await http(dc2.url, 'PUT', '/v1/catalog/register', { Node: 'wan-node', Address: '10.0.0.7', TaggedAddresses: { lan: '10.0.0.7', wan: '198.51.100.7' } });
  });

  test('answers for another datacenter show WAN addresses and carry the header', async () => {
    const r = await get(dc1, '/v1/catalog/nodes?dc=dc2');
    expect(r.headers.get('x-registry-translate-addresses')).toBe('true');
    const node = r.json.find((n: any) => n.Node === 'wan-node');
    expect(node.Address).toBe('198.51.100.7');
    expect(node.TaggedAddresses).toEqual({ lan: '10.0.0.7', wan: '198.51.100.7' });
  });

  test('local answers keep their addresses but carry the header (every response while it is on, issue 15); a datacenter without the setting has neither', async () => {
    const reg = await http(dc1.url, 'PUT', '/v1/catalog/register', { Node: 'local-wan', Address: '10.0.0.8', TaggedAddresses: { wan: '198.51.100.8' } });
    expect(reg.headers.get('x-registry-translate-addresses')).toBe('true');
    const local = await get(dc1, '/v1/catalog/nodes');
    expect(local.headers.get('x-registry-translate-addresses')).toBe('true');
    expect(local.json.find((n: any) => n.Node === 'local-wan').Address).toBe('10.0.0.8');
    const fromDc2 = await get(dc2, '/v1/catalog/nodes');
    expect(fromDc2.headers.get('x-registry-translate-addresses')).toBeNull();
    expect(fromDc2.json.find((n: any) => n.Node === 'wan-node').Address).toBe('10.0.0.7');
  });
});

describe('prepared-query failover', () => {
  beforeAll(async () => {
    // dc1's only `web` is critical; dc2 has a healthy one on a node with a WAN address.
    await http(dc1.url, 'PUT', '/v1/catalog/register', {
      Node: 'web-1',
      Address: '10.1.0.9',
      Service: { ID: 'web', Service: 'web', Port: 80 },
      Check: { CheckID: 'web-alive', Name: 'alive', ServiceID: 'web', Status: 'critical' },
    });
    await http(dc2.url, 'PUT', '/v1/catalog/register', {
      Node: 'web-2',
      Address: '10.2.0.9',
      TaggedAddresses: { wan: '203.0.113.9' },
      Service: { ID: 'web', Service: 'web', Port: 80 },
      Check: { CheckID: 'web-alive', Name: 'alive', ServiceID: 'web', Status: 'passing' },
    });
  });

  test.each([
    ['a Datacenters list', { Datacenters: ['dc9', 'dc2'] }],
    ['NearestN', { NearestN: 1 }],
  ])('%s sends the query to dc2 when dc1 has no healthy instance', async (what, Failover) => {
    const q = await http(dc1.url, 'POST', '/v1/query', { Name: `web-${what.length}`, Service: { Service: 'web', Failover } });
    expect(`${q.status} ${q.text}`).toMatch(/^200/);
    const r = await get(dc1, `/v1/query/${q.json.ID}/execute`);
    expect(r.status).toBe(200);
    expect(r.json.Datacenter).toBe('dc2');
    expect(r.json.Failovers).toBe(1);
    expect(r.json.Nodes).toHaveLength(1);
    expect(r.json.Nodes[0].Node).toMatchObject({ Node: 'web-2', Datacenter: 'dc2', Address: '203.0.113.9' });
  });

  test('without failover settings the local empty answer stands', async () => {
    const q = await http(dc1.url, 'POST', '/v1/query', { Name: 'web-local', Service: { Service: 'web' } });
    const r = await get(dc1, `/v1/query/${q.json.ID}/execute`);
    expect(r.json).toMatchObject({ Datacenter: 'dc1', Failovers: 0, Nodes: [] });
  });
});

describe('coordinates across datacenters', () => {
  test('/v1/coordinate/datacenters lists both datacenters\' servers by WAN coordinate', async () => {
    await waitFor(async () => (await get(dc1, '/v1/coordinate/datacenters')).json.every((d: any) => d.Coordinates.length > 0), 5_000);
    const r = await get(dc1, '/v1/coordinate/datacenters');
    expect(r.json.map((d: any) => d.Datacenter)).toEqual(['dc1', 'dc2']);
    expect(r.json[0]).toMatchObject({ AreaID: 'WAN', Coordinates: [{ Node: 'alpha.dc1' }] });
    expect(r.json[1]).toMatchObject({ AreaID: area1, Coordinates: [{ Node: 'beta.dc2' }] });
    expect(r.json[1].Coordinates[0].Coord.Vec).toHaveLength(8);
  });
});

describe('a peer datacenter going away', () => {
  test('its server turns failed in members and requests for it find no path', async () => {
    await dc2.stop();
    await waitFor(async () => (await get(dc1, `/v1/operator/area/${area1}/members`)).json.find((m: any) => m.Name === 'beta.dc2').Status === 'failed', 8_000);
    const r = await get(dc1, '/v1/catalog/nodes?dc=dc2');
    expect(r.status).toBe(500);
    expect(r.text).toBe('No path to datacenter');
    // It is still a datacenter this one knows of, just not reachable now.
    expect((await get(dc1, '/v1/catalog/datacenters')).json).toEqual(['dc1', 'dc2']);
  });
});
