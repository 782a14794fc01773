// Every prepared-query endpoint through HTTP: create/list/read/update/delete with every field and
// error case, name rules, template matching order and interpolation, execute (health filters, tags,
// node meta, limit, near, connect, result shape, ?cached) and explain; 404s for unknown queries.
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

let t: TestAgent;
const get = (path: string, headers: Record<string, string> = {}) => http(t.url, 'GET', path, undefined, headers);
const post = (body: unknown) => http(t.url, 'POST', '/v1/query', body);
const create = async (body: unknown): Promise<string> => {
  const r = await post(body);
  if (r.status !== 200) throw new Error(`query create failed: ${r.status} ${r.text}`);
  return r.json.ID;
};
const names = (r: { json: any }) => r.json.Nodes.map((n: any) => n.Node.Node).sort();

beforeAll(async () => {
  t = await startDevAgent();
  const reg = async (body: unknown) => {
    const r = await http(t.url, 'PUT', '/v1/catalog/register', body);
    if (r.status !== 200) throw new Error(`register failed: ${r.text}`);
  };
  await reg({
    Node: 'web-1',
    Address: '10.0.0.1',
    NodeMeta: { rack: 'r1' },
    Service: { Service: 'web', Tags: ['primary', 'v1'], Port: 80 },
    Check: { CheckID: 'web-1-ok', Name: 'ok', Status: 'passing', ServiceID: 'web' },
  });
  await reg({
    Node: 'web-2',
    Address: '10.0.0.2',
    NodeMeta: { rack: 'r2' },
    Service: { Service: 'web', Tags: ['v1'], Port: 80 },
    Check: { CheckID: 'web-2-warn', Name: 'warn', Status: 'warning', ServiceID: 'web' },
  });
  await reg({
    Node: 'web-3',
    Address: '10.0.0.3',
    Service: { Service: 'web', Tags: ['v2'], Port: 80 },
    Check: { CheckID: 'web-3-down', Name: 'down', Status: 'critical', ServiceID: 'web' },
  });
  await reg({ Node: 'db-1', Address: '10.0.1.1', Service: { Service: 'db-customer-primary', Port: 5432 } });
  await reg({ Node: 'db-2', Address: '10.0.1.2', Service: { Service: 'db-fallback', Port: 5432 } });
});
afterAll(async () => {
  await t.stop();
});

describe('create, read, update, delete', () => {
  test('create answers an ID; read answers an array with every field (zero values filled in)', async () => {
    const id = await create({ Name: 'web-q', Service: { Service: 'web', Tags: ['v1'] }, DNS: { TTL: '10s' }, Token: 'secret-token' });
    const r = await get(`/v1/query/${id}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual([
      {
        ID: id,
        Name: 'web-q',
        Session: '',
        Token: 'secret-token',
        Template: { Type: '', Regexp: '', RemoveEmptyTags: false },
        Service: {
          Service: 'web',
          Failover: { NearestN: 0, Datacenters: null },
          OnlyPassing: false,
          IgnoreCheckIDs: null,
          Near: '',
          Tags: ['v1'],
          NodeMeta: null,
          ServiceMeta: null,
          Meta: null,
          Connect: false,
        },
        DNS: { TTL: '10s' },
        CreateIndex: expect.any(Number),
        ModifyIndex: expect.any(Number),
        RaftIndex: { CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number) },
      },
    ]);
    // The spec's RaftIndex object holds the same indexes as the flat fields, in the list too.
    const [read] = r.json;
    expect(read.RaftIndex).toEqual({ CreateIndex: read.CreateIndex, ModifyIndex: read.ModifyIndex });
    const listed = (await get('/v1/query')).json.find((q: any) => q.ID === id);
    expect(listed.RaftIndex).toEqual(read.RaftIndex);
  });

  test('update replaces the whole definition and answers an empty body; delete answers an empty body', async () => {
    const id = await create({ Name: 'upd', Service: { Service: 'web', OnlyPassing: true } });
    const u = await http(t.url, 'PUT', `/v1/query/${id}`, { Name: 'upd2', Service: { Service: 'db' } });
    expect(u.status).toBe(200);
    expect(u.text).toBe('');
    const q = (await get(`/v1/query/${id}`)).json[0];
    expect(q).toMatchObject({ Name: 'upd2', Service: { Service: 'db', OnlyPassing: false } });
    expect(q.ModifyIndex).toBeGreaterThan(q.CreateIndex);
    const d = await http(t.url, 'DELETE', `/v1/query/${id}`);
    expect(d.status).toBe(200);
    expect(d.text).toBe('');
    expect((await get(`/v1/query/${id}`)).status).toBe(404);
  });

  test('unknown queries are 404 for read, update, delete, execute and explain', async () => {
    const id = '00000000-0000-4000-8000-00000000dead';
    expect((await get(`/v1/query/${id}`)).text).toBe('Query not found');
    expect((await http(t.url, 'PUT', `/v1/query/${id}`, { Name: 'x', Service: { Service: 'web' } })).status).toBe(404);
    expect((await http(t.url, 'DELETE', `/v1/query/${id}`)).status).toBe(404);
    expect((await get(`/v1/query/${id}/execute`)).text).toBe('Query not found');
    expect((await get('/v1/query/no-such-name/explain')).status).toBe(404);
  });

  test.each([
    [{ ID: '11111111-1111-4111-8111-111111111111', Name: 'x', Service: { Service: 'web' } }, 'ID must be empty when creating a new prepared query'],
    [{ Service: { Service: 'web' } }, 'Invalid prepared query: Must be bound to a session'],
    [{ Name: 'x', Service: {} }, 'Invalid prepared query: Must provide a Service name to query'],
    [{ Name: 'x', Service: { Service: 'web' }, Session: '00000000-0000-4000-8000-000000000000' }, 'invalid session "00000000-0000-4000-8000-000000000000"'],
    [{ Name: 'x', Template: { Type: 'glob' }, Service: { Service: 'web' } }, "failed compiling template: Bad Template.Type 'glob'"],
    [{ Name: 'x', Template: { Type: 'name_prefix_match', Regexp: '(' }, Service: { Service: 'web' } }, 'failed compiling template: Bad Regexp:'],
    [{ Name: 'x', Template: { Type: 'name_prefix_match' }, Service: { Service: '${nope}' } }, "failed compiling template: Bad format '${nope}' in Service.Service"],
    [{ Name: 'x', Service: { Service: 'web' }, Token: '<hidden>' }, "Bad Token '<hidden>'"],
  ])('%p → 400', async (body, message) => {
    const r = await post(body);
    expect(r.status).toBe(400);
    expect(r.text).toContain(message);
  });

  test('names are unique case-insensitively and may not equal another query\'s ID; one catch-all template', async () => {
    const id = await create({ Name: 'unique-name', Service: { Service: 'web' } });
    expect((await post({ Name: 'UNIQUE-name', Service: { Service: 'web' } })).text).toBe("name 'UNIQUE-name' aliases an existing query name");
    expect((await post({ Name: id, Service: { Service: 'web' } })).text).toBe(`name '${id}' aliases an existing query ID`);
    const all = await create({ Name: '', Template: { Type: 'name_prefix_match' }, Service: { Service: 'db-fallback' } });
    expect((await post({ Name: '', Template: { Type: 'name_prefix_match' }, Service: { Service: 'web' } })).text).toBe(
      'a query template with an empty name already exists',
    );
    await http(t.url, 'DELETE', `/v1/query/${all}`);
  });
});

describe('execute', () => {
  test('by ID and by name: critical instances are left out; the result has Consul\'s shape', async () => {
    const id = await create({ Name: 'web-all', Service: { Service: 'web' }, DNS: { TTL: '5s' } });
    for (const ref of [id, 'web-all', 'WEB-ALL']) {
      const r = await get(`/v1/query/${ref}/execute`);
      expect(r.status).toBe(200);
      expect(names(r)).toEqual(['web-1', 'web-2']);
      expect(r.json).toMatchObject({ Service: 'web', DNS: { TTL: '5s' }, Datacenter: 'dc1', Failovers: 0, Index: 0, KnownLeader: true, ConsistencyLevel: 'leader' });
      expect(r.json.Nodes[0]).toHaveProperty('Checks');
      // Each node item also carries DNS, Datacenter and Failovers (the spec's execute result).
      for (const n of r.json.Nodes) expect(n).toMatchObject({ DNS: { TTL: '5s' }, Datacenter: 'dc1', Failovers: 0 });
      expect(r.headers.get('x-registry-index')).toBe('1');
    }
  });

  test('OnlyPassing, IgnoreCheckIDs, Tags with !, NodeMeta', async () => {
    const run = async (service: object) => names(await get(`/v1/query/${await create({ Name: `f-${Math.random()}`, Service: { Service: 'web', ...service } })}/execute`));
    expect(await run({ OnlyPassing: true })).toEqual(['web-1']);
    expect(await run({ IgnoreCheckIDs: ['web-3-down'] })).toEqual(['web-1', 'web-2', 'web-3']);
    expect(await run({ Tags: ['V1', '!primary'] })).toEqual(['web-2']);
    expect(await run({ NodeMeta: { rack: 'r1' } })).toEqual(['web-1']);
  });

  test('limit truncates; a bad limit is 400; ?connect must parse', async () => {
    await create({ Name: 'lim', Service: { Service: 'web' } });
    expect((await get('/v1/query/lim/execute?limit=1')).json.Nodes).toHaveLength(1);
    const bad = await get('/v1/query/lim/execute?limit=x');
    expect(bad.status).toBe(400);
    expect(bad.text).toBe('Bad limit: strconv.Atoi: parsing "x": invalid syntax');
    expect((await get('/v1/query/lim/explain?limit=x')).status).toBe(400);
    expect((await get('/v1/query/lim/execute?connect=maybe')).status).toBe(400);
    expect((await get('/v1/query/lim/execute?connect=true')).json.Nodes).toEqual([]);
  });

  test('near=_agent and near=<node> are accepted (no coordinates: order unchanged in content)', async () => {
    await create({ Name: 'near-q', Service: { Service: 'web', Near: '_agent' } });
    expect(names(await get('/v1/query/near-q/execute'))).toEqual(['web-1', 'web-2']);
    expect(names(await get('/v1/query/near-q/execute?near=web-2'))).toEqual(['web-1', 'web-2']);
    expect(names(await get('/v1/query/near-q/execute?near=_ip', { 'X-Forwarded-For': '10.0.0.2' }))).toEqual(['web-1', 'web-2']);
  });

  test('?cached: MISS then HIT with Age; without ?cached no X-Cache', async () => {
    await create({ Name: 'cached-q', Service: { Service: 'web' } });
    const first = await get('/v1/query/cached-q/execute?cached');
    expect(first.headers.get('x-cache')).toBe('MISS');
    const second = await get('/v1/query/cached-q/execute?cached');
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(second.headers.get('age')).toMatch(/^\d+$/);
    const revalidated = await get('/v1/query/cached-q/execute?cached', { 'Cache-Control': 'max-age=0' });
    expect(revalidated.headers.get('x-cache')).toBe('MISS');
    expect((await get('/v1/query/cached-q/execute')).headers.get('x-cache')).toBeNull();
    expect((await get('/v1/query/cached-q/execute?cached&consistent')).status).toBe(400);
  });

  test('POST on execute is 405', async () => {
    const r = await http(t.url, 'POST', '/v1/query/lim/execute');
    expect(r.status).toBe(405);
  });
});

describe('templates', () => {
  beforeAll(async () => {
    await create({
      Name: 'db-',
      Template: { Type: 'name_prefix_match', Regexp: '^db-(.*?)-([^\\-]+?)$' },
      Service: { Service: 'db-${match(1)}-${match(2)}', Tags: ['${name.suffix}'] },
    });
    await create({ Name: 'db-fall', Template: { Type: 'name_prefix_match' }, Service: { Service: 'db-fallback' } });
    await create({ Name: 'db-customer-static', Service: { Service: 'db-fallback' } });
    await create({ Name: '', Template: { Type: 'name_prefix_match', RemoveEmptyTags: true }, Service: { Service: '${name.full}', Tags: ['', '${agent.segment}'] } });
  });

  test('the longest matching prefix wins; static queries come first; the catch-all takes the rest', async () => {
    expect((await get('/v1/query/db-customer-primary/execute')).json.Service).toBe('db-customer-primary');
    expect((await get('/v1/query/db-fallback-x/execute')).json.Service).toBe('db-fallback');
    expect((await get('/v1/query/db-customer-static/execute')).json.Service).toBe('db-fallback');
    expect((await get('/v1/query/web/execute')).json.Service).toBe('web');
    expect(names(await get('/v1/query/web/execute'))).toEqual(['web-1', 'web-2']);
  });

  test('explain answers the rendered template with its own ID and Name', async () => {
    const r = await get('/v1/query/db-customer-primary/explain');
    expect(r.status).toBe(200);
    expect(r.json.Query).toMatchObject({ Name: 'db-', Service: { Service: 'db-customer-primary', Tags: ['customer-primary'] } });
    expect(r.json).toMatchObject({ Index: 0, KnownLeader: true });
    const all = await get('/v1/query/anything/explain');
    expect(all.json.Query.Service).toMatchObject({ Service: 'anything', Tags: [] });
  });

  test('a template is not executed by its ID', async () => {
    const id = (await get('/v1/query')).json.find((q: any) => q.Name === 'db-fall').ID;
    const r = await get(`/v1/query/${id}/execute`);
    expect(r.status).toBe(400);
    expect(r.text).toBe('prepared query templates can only be resolved up by name, not by ID');
  });
});
