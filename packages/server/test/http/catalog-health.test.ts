// Every catalog and health endpoint and parameter of the spec, through HTTP.
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

let t: TestAgent;
const put = (path: string, body: unknown) => http(t.url, 'PUT', path, body);
const get = (path: string) => http(t.url, 'GET', path);

beforeAll(async () => {
  t = await startDevAgent();
  const reg = async (body: unknown) => {
    const r = await put('/v1/catalog/register', body);
    if (r.status !== 200) throw new Error(`setup register failed: ${r.status} ${r.text}`);
  };
  await reg({
    Node: 'web-1',
    Address: '10.0.0.1',
    NodeMeta: { rack: 'r1', env: 'prod' },
    TaggedAddresses: { wan: '198.51.100.1' },
    Service: { Service: 'web', Tags: ['v1', 'Primary'], Port: 80, Meta: { version: '1' } },
    Checks: [
      { CheckID: 'node-ok', Name: 'node ok', Status: 'passing' },
      { CheckID: 'web-http', Name: 'web http', Status: 'passing', ServiceID: 'web' },
    ],
  });
  await reg({
    Node: 'web-2',
    Address: '10.0.0.2',
    NodeMeta: { rack: 'r2', env: 'prod' },
    Service: { ID: 'web-b', Service: 'web', Tags: ['v2'], Port: 8080, Address: '10.9.9.9' },
    Check: { CheckID: 'web-b-http', Name: 'web b', Status: 'critical', ServiceID: 'web-b', Output: 'down' },
  });
  await reg({ Node: 'db-1', Address: '10.0.1.1', NodeMeta: { env: 'dev' }, Service: { Service: 'db', Port: 5432 } });
  await reg({
    Node: 'web-1',
    Address: '10.0.0.1',
    SkipNodeUpdate: true,
    Service: {
      Kind: 'connect-proxy',
      Service: 'web-proxy',
      Port: 21000,
      Proxy: { DestinationServiceName: 'web', DestinationServiceID: 'web', LocalServicePort: 80 },
    },
  });
});
afterAll(async () => {
  await t.stop();
});

describe('catalog', () => {
  test('register answers true; the agent node and registered nodes are listed in name order', async () => {
    const r = await get('/v1/catalog/nodes');
    expect(r.status).toBe(200);
    const names = r.json.map((n: any) => n.Node);
    expect(names).toEqual(expect.arrayContaining(['web-1', 'web-2', 'db-1', 'test-agent']));
    expect([...names].sort((a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase()))).toEqual(names);
    const web1 = r.json.find((n: any) => n.Node === 'web-1');
    expect(web1).toMatchObject({
      Node: 'web-1',
      Address: '10.0.0.1',
      Datacenter: 'dc1',
      TaggedAddresses: { wan: '198.51.100.1' },
      Meta: { rack: 'r1', env: 'prod' },
    });
    expect(web1.CreateIndex).toBeGreaterThan(0);
    expect(web1.ModifyIndex).toBeGreaterThanOrEqual(web1.CreateIndex);
  });

  test('nodes filter by repeated node-meta (all must match)', async () => {
    const r = await get('/v1/catalog/nodes?node-meta=env:prod&node-meta=rack:r2');
    expect(r.json.map((n: any) => n.Node)).toEqual(['web-2']);
  });

  test('services map names to their tags, filterable by node-meta', async () => {
    const r = await get('/v1/catalog/services');
    expect(Object.keys(r.json)).toEqual(expect.arrayContaining(['web', 'db', 'web-proxy']));
    expect([...r.json.web].sort()).toEqual(['Primary', 'v1', 'v2']);
    expect(r.json.db).toEqual([]);
    const dev = await get('/v1/catalog/services?node-meta=env:dev');
    expect(Object.keys(dev.json)).toEqual(['db']);
  });

  test('service entries carry every Service* field', async () => {
    const r = await get('/v1/catalog/service/web');
    expect(r.json).toHaveLength(2);
    const a = r.json.find((e: any) => e.ServiceID === 'web');
    expect(a).toMatchObject({
      Node: 'web-1',
      Address: '10.0.0.1',
      Datacenter: 'dc1',
      NodeMeta: { rack: 'r1', env: 'prod' },
      ServiceKind: '',
      ServiceID: 'web',
      ServiceName: 'web',
      ServiceTags: ['v1', 'Primary'],
      ServiceAddress: '',
      ServiceMeta: { version: '1' },
      ServicePort: 80,
      ServiceEnableTagOverride: false,
      ServiceProxyDestination: '',
    });
    for (const field of ['ServiceProxy', 'ServiceConnect', 'ServiceWeights', 'TaggedAddresses', 'CreateIndex', 'ModifyIndex']) {
      expect(a).toHaveProperty(field);
    }
    const b = r.json.find((e: any) => e.ServiceID === 'web-b');
    expect(b.ServiceAddress).toBe('10.9.9.9');
  });

  test('service tag filter: repeated tags must all match, case-insensitively', async () => {
    expect((await get('/v1/catalog/service/web?tag=v1')).json.map((e: any) => e.ServiceID)).toEqual(['web']);
    expect((await get('/v1/catalog/service/web?tag=primary&tag=v1')).json).toHaveLength(1);
    expect((await get('/v1/catalog/service/web?tag=v1&tag=v2')).json).toEqual([]);
    expect((await get('/v1/catalog/service/web?node-meta=rack:r2')).json.map((e: any) => e.Node)).toEqual(['web-2']);
  });

  test('connect lists the proxies for a service', async () => {
    const r = await get('/v1/catalog/connect/web');
    expect(r.json.map((e: any) => e.ServiceName)).toEqual(['web-proxy']);
    expect(r.json[0]).toMatchObject({ ServiceKind: 'connect-proxy', ServiceProxyDestination: 'web' });
    expect(r.json[0].ServiceProxy.DestinationServiceName).toBe('web');
  });

  test('node lists its services by ID; an unknown node is null', async () => {
    const r = await get('/v1/catalog/node/web-1');
    expect(r.json.Node.Node).toBe('web-1');
    expect(Object.keys(r.json.Services).sort()).toEqual(['web', 'web-proxy']);
    expect(r.json.Services.web).toMatchObject({ ID: 'web', Service: 'web', Port: 80, Weights: { Passing: 1, Warning: 1 } });
    const none = await get('/v1/catalog/node/ghost');
    expect(none.status).toBe(200);
    expect(none.json).toBeNull();
  });

  test('a check for a service not on the node is refused with 400 and nothing is written', async () => {
    const r = await put('/v1/catalog/register', {
      Node: 'bad-check-node',
      Address: '10.7.7.7',
      Check: { CheckID: 'c', Name: 'c', ServiceID: 'absent' },
    });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/Missing service registration/);
    expect((await get('/v1/catalog/node/bad-check-node')).json).toBeNull();
  });

  test('a node ID must be a UUID', async () => {
    const r = await put('/v1/catalog/register', { Node: 'x', Address: 'y', ID: 'not-a-uuid' });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/^Bad node ID/);
  });

  test('deregister: a service takes its checks, a check alone, the whole node', async () => {
    await put('/v1/catalog/register', {
      Node: 'dereg',
      Address: '10.8.8.8',
      Service: { Service: 'gone', Port: 1 },
      Checks: [
        { CheckID: 'svc-check', Name: 's', ServiceID: 'gone', Status: 'passing' },
        { CheckID: 'node-check', Name: 'n', Status: 'passing' },
        { CheckID: 'node-check-2', Name: 'n2', Status: 'passing' },
      ],
    });
    expect((await put('/v1/catalog/deregister', { Node: 'dereg', ServiceID: 'gone' })).json).toBe(true);
    let checks = (await get('/v1/health/node/dereg')).json.map((c: any) => c.CheckID).sort();
    expect(checks).toEqual(['node-check', 'node-check-2']);
    await put('/v1/catalog/deregister', { Node: 'dereg', CheckID: 'node-check' });
    checks = (await get('/v1/health/node/dereg')).json.map((c: any) => c.CheckID);
    expect(checks).toEqual(['node-check-2']);
    await put('/v1/catalog/deregister', { Node: 'dereg' });
    expect((await get('/v1/catalog/node/dereg')).json).toBeNull();
    expect((await get('/v1/health/node/dereg')).json).toEqual([]);
  });

  test('datacenters lists the local one', async () => {
    expect((await get('/v1/catalog/datacenters')).json).toEqual(['dc1']);
  });

  test('empty names are 400', async () => {
    expect((await get('/v1/catalog/service/')).status).toBe(400);
    expect((await get('/v1/catalog/node/')).text).toBe('Missing node name');
  });
});

describe('health', () => {
  test('node checks carry the read-side fields', async () => {
    const r = await get('/v1/health/node/web-1');
    const svcCheck = r.json.find((c: any) => c.CheckID === 'web-http');
    expect(svcCheck).toMatchObject({
      Node: 'web-1',
      CheckID: 'web-http',
      Name: 'web http',
      Status: 'passing',
      ServiceID: 'web',
      ServiceName: 'web',
      ServiceTags: ['v1', 'Primary'],
      Output: '',
    });
    expect(svcCheck).toHaveProperty('Definition');
    expect(svcCheck).toHaveProperty('CreateIndex');
  });

  test("node checks carry the node's ID; the node may be named by its ID", async () => {
    const id = (await get('/v1/catalog/node/test-agent')).json.Node.ID;
    const byName = await get('/v1/health/node/test-agent');
    expect(byName.json).toEqual([expect.objectContaining({ ID: id, Node: 'test-agent', CheckID: 'serfHealth' })]);
    const byId = await get(`/v1/health/node/${id}`);
    expect(byId.json).toEqual(byName.json);
    // A node registered without an ID has an empty one.
    const noId = await get('/v1/health/node/web-1');
    expect(noId.json.every((c: any) => c.ID === '')).toBe(true);
  });

  test('checks for a service', async () => {
    const r = await get('/v1/health/checks/web');
    expect(r.json.map((c: any) => c.CheckID).sort()).toEqual(['web-b-http', 'web-http']);
  });

  test('service instances come with node, service (Weights) and checks; passing filters', async () => {
    const all = await get('/v1/health/service/web');
    expect(all.json).toHaveLength(2);
    const one = all.json.find((e: any) => e.Service.ID === 'web');
    expect(one.Node.Node).toBe('web-1');
    expect(one.Service.Weights).toEqual({ Passing: 1, Warning: 1 });
    expect(one.Checks.map((c: any) => c.CheckID)).toEqual(['node-ok', 'web-http']);
    const passing = await get('/v1/health/service/web?passing');
    expect(passing.json.map((e: any) => e.Service.ID)).toEqual(['web']);
    expect((await get('/v1/health/service/web?passing=false')).json).toHaveLength(2);
    expect((await get('/v1/health/service/web?passing=maybe')).status).toBe(400);
    expect((await get('/v1/health/service/web?tag=v2')).json.map((e: any) => e.Service.ID)).toEqual(['web-b']);
    expect((await get('/v1/health/service/web?node-meta=rack:r1')).json).toHaveLength(1);
  });

  test('connect health lists proxies', async () => {
    const r = await get('/v1/health/connect/web');
    expect(r.json.map((e: any) => e.Service.Service)).toEqual(['web-proxy']);
  });

  test('checks by state; an unknown state is 400', async () => {
    const critical = await get('/v1/health/state/critical');
    expect(critical.json.map((c: any) => c.CheckID)).toContain('web-b-http');
    expect(critical.json.every((c: any) => c.Status === 'critical')).toBe(true);
    const any = await get('/v1/health/state/any');
    expect(any.json.length).toBeGreaterThan(critical.json.length);
    expect((await get('/v1/health/state/bogus')).status).toBe(400);
    const meta = await get('/v1/health/state/any?node-meta=env:dev');
    expect(meta.json).toEqual([]);
  });
});

describe("the agent's own node", () => {
  test('is registered with a UUID, the registry service and a passing serfHealth check', async () => {
    const node = await get('/v1/catalog/node/test-agent');
    expect(node.json.Node.ID).toMatch(/^[0-9a-f-]{36}$/);
    expect(node.json.Services.registry).toMatchObject({ Service: 'registry' });
    const checks = await get('/v1/health/node/test-agent');
    expect(checks.json).toEqual([
      expect.objectContaining({ CheckID: 'serfHealth', Name: 'Serf Health Status', Status: 'passing' }),
    ]);
  });

  test('carries its lan and wan addresses and the network-segment meta (Consul API tests assert both maps)', async () => {
    const node = await get('/v1/catalog/node/test-agent');
    const address = node.json.Node.Address;
    expect(node.json.Node.TaggedAddresses).toEqual({ lan: address, wan: address });
    expect(node.json.Node.Meta).toEqual({ 'registry-network-segment': '' });
  });

  test('near=_agent sorts by distance from this agent (no coordinates: order kept)', async () => {
    const r = await get('/v1/catalog/nodes?near=_agent');
    expect(r.status).toBe(200);
    expect(r.json.length).toBeGreaterThanOrEqual(4);
  });
});
