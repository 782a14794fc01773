// Issue 15 part 2 on an in-process dev agent, through HTTP only: the agent health endpoints for load
// balancers, maintenance mode, user events, autopilot configuration and health, host facts,
// DebugConfig, and the errors of each.
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
beforeAll(async () => {
  a = await startDevAgent();
});
afterAll(async () => {
  await a.stop();
});

const put = (path: string, body?: unknown) => http(a.url, 'PUT', path, body);
const get = (path: string, headers: Record<string, string> = {}) => http(a.url, 'GET', path, undefined, headers);

describe('/v1/agent/health/service', () => {
  beforeAll(async () => {
    for (const id of ['web1', 'web2']) {
      expect((await put('/v1/agent/service/register', { ID: id, Name: 'web', Port: 80, Tags: ['v1'], Check: { CheckID: `${id}-ttl`, TTL: '60s', Status: 'passing' } })).status).toBe(200);
    }
  });

  test('by ID: 200 passing with the service and its checks, 429 warning, 503 critical; format=text is the word alone', async () => {
    let r = await get('/v1/agent/health/service/id/web1');
    expect(r.status).toBe(200);
    expect(r.json.AggregatedStatus).toBe('passing');
    expect(r.json.Service).toMatchObject({ ID: 'web1', Service: 'web', Port: 80, Tags: ['v1'] });
    expect(r.json.Checks.map((c: any) => c.CheckID)).toEqual(['web1-ttl']);
    expect((await put('/v1/agent/check/warn/web1-ttl')).status).toBe(200);
    r = await get('/v1/agent/health/service/id/web1');
    expect(r.status).toBe(429);
    expect(r.json.AggregatedStatus).toBe('warning');
    r = await get('/v1/agent/health/service/id/web1?format=text');
    expect(r.status).toBe(429);
    expect(r.text).toBe('warning');
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await put('/v1/agent/check/fail/web1-ttl')).status).toBe(200);
    r = await get('/v1/agent/health/service/id/web1');
    expect(r.status).toBe(503);
    expect(r.json.AggregatedStatus).toBe('critical');
    expect((await put('/v1/agent/check/pass/web1-ttl')).status).toBe(200);
  });

  test('by name: one entry per instance, the worst instance decides the code', async () => {
    let r = await get('/v1/agent/health/service/name/web');
    expect(r.status).toBe(200);
    expect(r.json.map((i: any) => i.Service.ID).sort()).toEqual(['web1', 'web2']);
    expect((await put('/v1/agent/check/fail/web2-ttl')).status).toBe(200);
    r = await get('/v1/agent/health/service/name/web');
    expect(r.status).toBe(503);
    expect(r.json.map((i: any) => i.AggregatedStatus).sort()).toEqual(['critical', 'passing']);
    expect((await get('/v1/agent/health/service/name/web?format=text')).text).toBe('critical');
    expect((await put('/v1/agent/check/pass/web2-ttl')).status).toBe(200);
  });

  test('unknown ID and name are 404 (JSON body and text reason)', async () => {
    let r = await get('/v1/agent/health/service/id/nope');
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ AggregatedStatus: 'critical', Service: null, Checks: null });
    r = await get('/v1/agent/health/service/id/nope?format=text');
    expect(r.status).toBe(404);
    expect(r.text).toBe('ServiceId nope not found');
    r = await get('/v1/agent/health/service/name/nope');
    expect(r.status).toBe(404);
    expect(r.json).toEqual([]);
    expect((await get('/v1/agent/health/service/name/nope?format=text')).text).toBe('ServiceName nope Not Found');
  });

  test('service maintenance: a critical _service_maintenance check, 503 "maintenance", then gone again', async () => {
    expect((await put('/v1/agent/service/maintenance/web1?enable=true&reason=deploying')).status).toBe(200);
    const r = await get('/v1/agent/health/service/id/web1');
    expect(r.status).toBe(503);
    expect(r.json.AggregatedStatus).toBe('maintenance');
    const check = r.json.Checks.find((c: any) => c.CheckID === '_service_maintenance:web1');
    expect(check).toMatchObject({ Status: 'critical', Notes: 'deploying', ServiceID: 'web1', Name: 'Service Maintenance Mode' });
    // The catalog has it too: health queries stop returning the instance as passing.
    const passing = (await get('/v1/health/service/web?passing')).json as any[];
    expect(passing.map((e) => e.Service.ID)).toEqual(['web2']);
    expect((await get('/v1/agent/health/service/id/web2')).status).toBe(200);
    expect((await put('/v1/agent/service/maintenance/web1?enable=false')).status).toBe(200);
    expect((await get('/v1/agent/health/service/id/web1')).status).toBe(200);
  });

  test('node maintenance makes every local service unavailable, with the default reason', async () => {
    expect((await put('/v1/agent/maintenance?enable=true')).status).toBe(200);
    const r = await get('/v1/agent/health/service/name/web');
    expect(r.status).toBe(503);
    const node = r.json[0].Checks.find((c: any) => c.CheckID === '_node_maintenance');
    expect(node.Notes).toBe('Maintenance mode is enabled for this node, but no reason was provided. This is a default message.');
    const catalog = (await get('/v1/health/node/test-agent')).json as any[];
    expect(catalog.find((c) => c.CheckID === '_node_maintenance')?.Status).toBe('critical');
    expect((await put('/v1/agent/maintenance?enable=false')).status).toBe(200);
    expect((await get('/v1/agent/health/service/name/web')).status).toBe(200);
  });

  test.each([
    ['/v1/agent/maintenance', 400, 'Missing value for enable'],
    ['/v1/agent/maintenance?enable=maybe', 400, 'Invalid value for enable'],
    ['/v1/agent/service/maintenance/web1', 400, 'Missing value for enable'],
    ['/v1/agent/service/maintenance/ghost?enable=true', 404, 'No service registered with ID "ghost"'],
  ])('PUT %s is %i', async (path, status, text) => {
    const r = await put(path);
    expect(r.status).toBe(status);
    expect(r.text).toContain(text);
  });
});

describe('user events', () => {
  test('fire answers the event; list shows it with its payload, name filter, and blocks until the next one', async () => {
    const fired = await put('/v1/event/fire/deploy', 'v1.2.3');
    expect(fired.status).toBe(200);
    expect(fired.json).toMatchObject({ Name: 'deploy', Payload: Buffer.from('v1.2.3').toString('base64'), NodeFilter: '', ServiceFilter: '', TagFilter: '', Version: 1 });
    expect(fired.json.ID).toMatch(/^[0-9a-f-]{36}$/);
    expect(fired.json.LTime).toBeGreaterThan(0);
    expect((await put('/v1/event/fire/other')).json.Payload).toBeNull();

    const list = await get('/v1/event/list?name=deploy');
    expect(list.status).toBe(200);
    expect(list.json.map((e: any) => e.ID)).toEqual([fired.json.ID]);
    const index = Number(list.headers.get('x-registry-index'));
    expect(index).toBeGreaterThan(0);
    expect((await get('/v1/event/list')).json.map((e: any) => e.Name)).toEqual(['deploy', 'other']);

    const started = Date.now();
    // The index of the list asked for (Consul's: the last listed event's ID folded to 64 bits, so
    // exact as sent, never through a Number).
    const blocked = get(`/v1/event/list?name=deploy&index=${(await get('/v1/event/list?name=deploy')).headers.get('x-registry-index')}&wait=10s`);
    await new Promise((r) => setTimeout(r, 300));
    const second = await put('/v1/event/fire/deploy', 'v2');
    const woke = await blocked;
    expect(Date.now() - started).toBeLessThan(9_000);
    expect(woke.json.map((e: any) => e.ID)).toEqual([fired.json.ID, second.json.ID]);
    expect(woke.json[1].LTime).toBeGreaterThan(fired.json.LTime);
  });

  test("the list's index is Consul's (the last event's ID folded to 64 bits): a Go event watch delivers each event once", async () => {
    // Consul's uuidToUint64, written out here to check the header against the event IDs.
    const fold = (id: string) => {
      const hex = id.replace(/-/g, '');
      return (BigInt(`0x${hex.slice(0, 16)}`) ^ BigInt(`0x${hex.slice(16)}`)).toString();
    };
    const none = await get('/v1/event/list?name=never-fired');
    expect(none.json).toEqual([]);
    expect(none.headers.get('x-registry-index')).toBe('1');
    // Blocking on that empty list waits its wait, while the agent goes on answering (an empty ring's
    // index is 0, and a wait on it must still block rather than spin).
    const emptyWait = Date.now();
    const blockedEmpty = get('/v1/event/list?name=never-fired&index=1&wait=1s');
    const meanwhile = Date.now();
    expect((await put('/v1/kv/still-answering', 'yes')).status).toBe(200);
    expect(Date.now() - meanwhile).toBeLessThan(900);
    expect((await blockedEmpty).json).toEqual([]);
    expect(Date.now() - emptyWait).toBeGreaterThanOrEqual(900);

    const e1 = (await put('/v1/event/fire/watched', 'one')).json;
    const first = await get('/v1/event/list?name=watched');
    const lastIndex = first.headers.get('x-registry-index')!;
    expect(lastIndex).toBe(fold(e1.ID));

    // What Go's watch does: block on that index, then keep only the events after the one whose ID folds to it.
    const started = Date.now();
    const blocked = get(`/v1/event/list?name=watched&index=${lastIndex}&wait=10s`);
    await new Promise((r) => setTimeout(r, 300));
    const e2 = (await put('/v1/event/fire/watched', 'two')).json;
    const woke = await blocked;
    expect(Date.now() - started).toBeLessThan(9_000);
    const ids = woke.json.map((e: any) => e.ID) as string[];
    const seenAt = ids.findIndex((id) => fold(id) === lastIndex);
    expect(ids.slice(seenAt + 1)).toEqual([e2.ID]);
    expect(woke.headers.get('x-registry-index')).toBe(fold(e2.ID));

    // An index that is not the current one answers at once (not monotonic: no "below" to wait on).
    const other = Date.now();
    const stale = await get(`/v1/event/list?name=watched&index=${lastIndex}&wait=10s`);
    expect(Date.now() - other).toBeLessThan(5_000);
    expect(stale.json).toHaveLength(2);
    // And the current one waits its (short) wait when nothing is fired.
    const quiet = Date.now();
    const waited = await get(`/v1/event/list?name=watched&index=${fold(e2.ID)}&wait=1s`);
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(900);
    expect(waited.headers.get('x-registry-index')).toBe(fold(e2.ID));
  });

  test('filters: an event for another node or service is not delivered here; one for ours is', async () => {
    await put('/v1/agent/service/register', { ID: 'db1', Name: 'db', Tags: ['primary'] });
    const elsewhere = await put('/v1/event/fire/f1?node=^other-node$');
    const noService = await put('/v1/event/fire/f1?service=^cache$');
    const wrongTag = await put('/v1/event/fire/f1?service=^db$&tag=^replica$');
    const ours = await put('/v1/event/fire/f1?node=^test-&service=db&tag=prim');
    for (const r of [elsewhere, noService, wrongTag, ours]) expect(r.status).toBe(200);
    expect(ours.json).toMatchObject({ NodeFilter: '^test-', ServiceFilter: 'db', TagFilter: 'prim' });
    expect((await get('/v1/event/list?name=f1')).json.map((e: any) => e.ID)).toEqual([ours.json.ID]);
  });

  test.each([
    ['/v1/event/fire/x?tag=a', 'cannot provide tag filter without service filter'],
    ['/v1/event/fire/x?node=(', 'Invalid node filter'],
    ['/v1/event/fire/', 'User event missing name'],
  ])('PUT %s is 400', async (path, text) => {
    const r = await put(path);
    expect(r.status).toBe(400);
    expect(r.text).toContain(text);
  });

  test('an event larger than 512 bytes is refused and not kept', async () => {
    const r = await put('/v1/event/fire/big', 'x'.repeat(600));
    expect(r.status).toBe(400);
    expect(r.text).toContain('exceeds configured limit of 512 bytes');
    expect((await get('/v1/event/list?name=big')).json).toEqual([]);
  });
});

describe('autopilot', () => {
  test('configuration: defaults, PUT, CAS that fails and one that succeeds', async () => {
    let r = await get('/v1/operator/autopilot/configuration');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      CleanupDeadServers: true,
      LastContactThreshold: '200ms',
      MaxTrailingLogs: 250,
      ServerStabilizationTime: '10s',
      RedundancyZoneTag: '',
      DisableUpgradeMigration: false,
      UpgradeVersionTag: '',
      CreateIndex: 0,
      ModifyIndex: 0,
    });
    const body = { CleanupDeadServers: false, LastContactThreshold: '300ms', MaxTrailingLogs: 100, ServerStabilizationTime: 5_000_000_000, RedundancyZoneTag: 'zone' };
    r = await put('/v1/operator/autopilot/configuration', body);
    expect(r.status).toBe(200);
    expect(r.json).toBe(true);
    r = await get('/v1/operator/autopilot/configuration');
    expect(r.json).toMatchObject({ CleanupDeadServers: false, LastContactThreshold: '300ms', MaxTrailingLogs: 100, ServerStabilizationTime: '5s', RedundancyZoneTag: 'zone' });
    const modify = r.json.ModifyIndex;
    expect(modify).toBeGreaterThan(0);
    expect(Number(r.headers.get('x-registry-index'))).toBe(modify);

    r = await put(`/v1/operator/autopilot/configuration?cas=${modify - 1}`, { ...body, MaxTrailingLogs: 7 });
    expect(r.json).toBe(false);
    expect((await get('/v1/operator/autopilot/configuration')).json.MaxTrailingLogs).toBe(100);
    r = await put(`/v1/operator/autopilot/configuration?cas=${modify}`, { ...body, MaxTrailingLogs: 7 });
    expect(r.json).toBe(true);
    expect((await get('/v1/operator/autopilot/configuration')).json.MaxTrailingLogs).toBe(7);
  });

  test.each([
    [{ LastContactThreshold: 'soon' }, '', 'LastContactThreshold: invalid duration'],
    [{ MaxTrailingLogs: 'many' }, '', 'Request decode failed'],
    [{}, '?cas=x', 'Error parsing cas value'],
  ])('PUT %j%s is 400', async (body, query, text) => {
    const r = await put(`/v1/operator/autopilot/configuration${query}`, body);
    expect(r.status).toBe(400);
    expect(r.text).toContain(text);
  });

  test('health: the one server is the healthy leader', async () => {
    await put('/v1/operator/autopilot/configuration', { CleanupDeadServers: true, LastContactThreshold: '200ms', MaxTrailingLogs: 250 });
    const r = await get('/v1/operator/autopilot/health');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ Healthy: true, FailureTolerance: 0 });
    expect(r.json.Servers).toHaveLength(1);
    const s = r.json.Servers[0];
    expect(s).toMatchObject({ Name: 'test-agent', SerfStatus: 'alive', Leader: true, Voter: true, Healthy: true, LastContact: '0s' });
    expect(s.ID).toBe((await get('/v1/agent/self')).json.Config.NodeID);
    expect(s.LastIndex).toBeGreaterThan(0);
    expect(s.LastTerm).toBeGreaterThan(0);
    expect(Number.isNaN(Date.parse(s.StableSince))).toBe(false);
  });
});

describe('agent facts', () => {
  test('/v1/agent/host has Consul\'s sections', async () => {
    const r = await get('/v1/agent/host');
    expect(r.status).toBe(200);
    expect(r.json.Memory.total).toBeGreaterThan(0);
    expect(r.json.CPU.length).toBeGreaterThan(0);
    expect(r.json.Host.hostname).toEqual(expect.any(String));
    expect(r.json.Disk.total).toBeGreaterThan(0);
    expect(r.json.CollectionTime).toBeGreaterThan(Date.now() * 1e6 - 60e9);
    expect(r.json.Errors).toEqual([]);
  });

  test('/v1/agent/self carries DebugConfig', async () => {
    const r = await get('/v1/agent/self');
    expect(r.json.DebugConfig).toMatchObject({ NodeName: 'test-agent', Datacenter: 'dc1', DevMode: true, ServerMode: true, ACLToken: '', ACLsEnabled: false });
  });

  test('PUT /v1/agent/token with ACLs off is 401', async () => {
    const r = await put('/v1/agent/token/default', { Token: 'x' });
    expect(r.status).toBe(401);
    expect(r.text).toBe('ACL support disabled');
  });

  test('force-leave of an unknown node is 200, as in Consul; members?wan=1 names this server node.dc', async () => {
    const r = await put('/v1/agent/force-leave/nobody');
    expect(r.status).toBe(200);
    const wan = await get('/v1/agent/members?wan=1');
    expect(wan.json.map((m: any) => m.Name)).toEqual(['test-agent.dc1']);
    expect(wan.json[0]).toMatchObject({ Status: 1, Tags: { dc: 'dc1', role: 'registry' } });
  });
});

