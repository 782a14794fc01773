// `PUT /v1/agent/join/<server of another datacenter>?wan=1` links both sides (issue #29 item 4),
// as Consul's WAN pool is one pool: the joined datacenter lists the joiner in members?wan=1 and
// reaches it with ?dc=, without an operator making an area on that side too.
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

let dc1: TestAgent;
let dc2: TestAgent;

beforeAll(async () => {
  [dc1, dc2] = await Promise.all([
    startDevAgent((c) => {
      c.datacenter = 'dc1';
      c.nodeName = 'one';
    }),
    startDevAgent((c) => {
      c.datacenter = 'dc2';
      c.nodeName = 'two';
    }),
  ]);
}, 30_000);

afterAll(async () => {
  await Promise.all([dc1?.stop(), dc2?.stop()]);
});

const wanNames = async (a: TestAgent) => ((await http(a.url, 'GET', '/v1/agent/members?wan=1')).json as { Name: string; Status: number }[]).map((m) => `${m.Name}:${m.Status}`).sort();

test('a WAN join is seen from both sides', async () => {
  const join = await http(dc1.url, 'PUT', `/v1/agent/join/${dc2.agent.self.address}?wan=1`);
  expect(join.status).toBe(200);
  // The joiner lists both at once; the joined side as soon as its link-back is written.
  expect(await wanNames(dc1)).toEqual(['one.dc1:1', 'two.dc2:1']);
  await waitFor(async () => (await wanNames(dc2)).join() === 'one.dc1:1,two.dc2:1', 10_000, 100);
  // dc2 made an area for dc1 itself.
  expect(((await http(dc2.url, 'GET', '/v1/operator/area')).json as { PeerDatacenter: string }[]).map((a) => a.PeerDatacenter)).toEqual(['dc1']);
  // And reaches it: a write in dc1 through dc2, read back in dc1.
  expect((await http(dc2.url, 'PUT', '/v1/kv/from-dc2?dc=dc1', 'hello')).status).toBe(200);
  expect((await http(dc1.url, 'GET', '/v1/kv/from-dc2?raw')).text).toBe('hello');
  // A second join changes nothing: still one area on each side.
  expect((await http(dc1.url, 'PUT', `/v1/agent/join/${dc2.agent.self.address}?wan=1`)).status).toBe(200);
  await new Promise((r) => setTimeout(r, 500));
  expect(((await http(dc2.url, 'GET', '/v1/operator/area')).json as unknown[]).length).toBe(1);
  expect(((await http(dc1.url, 'GET', '/v1/operator/area')).json as unknown[]).length).toBe(1);
});

test('an area join stays one-sided: the other side decides on its own area', async () => {
  const dc3 = await startDevAgent((c) => {
    c.datacenter = 'dc3';
    c.nodeName = 'three';
  });
  try {
    const area = await http(dc1.url, 'POST', '/v1/operator/area', { PeerDatacenter: 'dc3' });
    expect(area.status).toBe(200);
    const joined = await http(dc1.url, 'PUT', `/v1/operator/area/${area.json.ID}/join`, [dc3.agent.self.address]);
    expect(joined.json[0].Joined).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    expect((await http(dc3.url, 'GET', '/v1/operator/area')).json).toEqual([]);
  } finally {
    await dc3.stop();
  }
});
