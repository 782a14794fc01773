import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
beforeAll(async () => {
  a = await startDevAgent();
});
afterAll(async () => {
  await a.stop();
});

const create = (body: unknown) => http(a.url, 'POST', '/v1/connect/intentions', body);
const intention = (SourceName: string, DestinationName: string, Action = 'allow', extra: object = {}) => ({
  SourceName, DestinationName, SourceType: 'registry', Action, ...extra,
});

async function clear(): Promise<void> {
  const list = await http(a.url, 'GET', '/v1/connect/intentions');
  for (const i of list.json) await http(a.url, 'DELETE', `/v1/connect/intentions/${i.ID}`);
}

beforeEach(clear);

describe('intention CRUD', () => {
  test('the list is [] when empty, with an index header', async () => {
    const r = await http(a.url, 'GET', '/v1/connect/intentions');
    expect(r.status).toBe(200);
    expect(r.json).toEqual([]);
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(0);
  });

  test('create → get → update → delete round trip', async () => {
    const c = await create(intention('web', 'db', 'allow', { Description: 'hi', Meta: { team: 'a' } }));
    expect(c.status).toBe(200);
    expect(c.json.ID).toMatch(/^[0-9a-f-]{36}$/);
    const id = c.json.ID;

    const g = await http(a.url, 'GET', `/v1/connect/intentions/${id}`);
    expect(g.status).toBe(200);
    expect(g.json).toMatchObject({
      ID: id, Description: 'hi', SourceNS: 'default', SourceName: 'web', DestinationNS: 'default', DestinationName: 'db',
      SourceType: 'registry', Action: 'allow', DefaultAddr: '', DefaultPort: 0, Meta: { team: 'a' }, Precedence: 9,
    });
    expect(Date.parse(g.json.CreatedAt)).toBeGreaterThan(0);
    expect(g.json.CreatedAt).toBe(g.json.UpdatedAt);
    expect(g.json.CreateIndex).toBe(g.json.ModifyIndex);

    const u = await http(a.url, 'PUT', `/v1/connect/intentions/${id}`, intention('web', 'db', 'deny'));
    expect(u.status).toBe(200);
    expect(u.json).toEqual({ ID: id });
    const g2 = (await http(a.url, 'GET', `/v1/connect/intentions/${id}`)).json;
    expect(g2).toMatchObject({ Action: 'deny', CreatedAt: g.json.CreatedAt, CreateIndex: g.json.CreateIndex, Meta: {} });
    expect(g2.ModifyIndex).toBeGreaterThan(g.json.ModifyIndex);

    const d = await http(a.url, 'DELETE', `/v1/connect/intentions/${id}`);
    expect(d.status).toBe(200);
    expect(d.json).toBe(true);
    const gone = await http(a.url, 'GET', `/v1/connect/intentions/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.text).toBe('Intention not found');
  });

  test('keys are matched case-insensitively in bodies', async () => {
    const c = await create({ sourcename: 'a', destinationname: 'b', action: 'deny', sourcetype: 'registry' });
    expect(c.status).toBe(200);
    expect((await http(a.url, 'GET', `/v1/connect/intentions/${c.json.ID}`)).json.Action).toBe('deny');
  });

  test('a malformed ID is 400 mentioning UUID; an unknown one is 404', async () => {
    const r = await http(a.url, 'GET', '/v1/connect/intentions/xyz');
    expect(r.status).toBe(400);
    expect(r.text).toContain('UUID');
    expect((await http(a.url, 'GET', '/v1/connect/intentions/00000000-0000-0000-0000-000000000000')).status).toBe(404);
  });

  test.each([
    [{ DestinationName: 'db', SourceType: 'registry', Action: 'allow' }, 'SourceName must be set'],
    [{ SourceName: 'web', SourceType: 'registry', Action: 'allow' }, 'DestinationName must be set'],
    [{ SourceName: 'web', DestinationName: 'db', SourceType: 'registry' }, "Action must be set to 'allow' or 'deny'"],
    [{ SourceName: 'web', DestinationName: 'db', SourceType: 'consul', Action: 'allow' }, "SourceType must be set to 'registry'"],
    [{ SourceName: 'w*', DestinationName: 'db', Action: 'allow' }, "wildcard character '*' cannot be used with partial values"],
    [{ SourceNS: '*', SourceName: 'web', DestinationName: 'db', Action: 'allow' }, 'exact value cannot follow wildcard namespace'],
    [{ SourceName: 'web', DestinationName: 'db', Action: 'allow', Description: 'd'.repeat(600) }, 'Description exceeds maximum length 512'],
  ])('create %j is 400: %s', async (body, message) => {
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.text).toContain(message);
  });

  test('create with an ID is refused', async () => {
    const r = await create({ ...intention('a', 'b'), ID: '00000000-0000-0000-0000-000000000001' });
    expect(r.status).toBe(400);
    expect(r.text).toBe('ID must be empty when creating a new intention');
  });

  test('an empty or malformed body is 400', async () => {
    expect((await http(a.url, 'POST', '/v1/connect/intentions')).status).toBe(400);
    expect((await http(a.url, 'POST', '/v1/connect/intentions', '{nope')).status).toBe(400);
  });

  test('the source/destination pair must be unique', async () => {
    const first = (await create(intention('web', 'db'))).json.ID;
    const r = await create(intention('web', 'db', 'deny'));
    expect(r.status).toBe(400);
    expect(r.text).toBe(`duplicate intention found: ALLOW default/web => default/db (ID: ${first}, Precedence: 9)`);
  });

  test('an ID in the update body must match the path', async () => {
    const id = (await create(intention('web', 'db'))).json.ID;
    const r = await http(a.url, 'PUT', `/v1/connect/intentions/${id}`, { ...intention('web', 'db'), ID: '00000000-0000-0000-0000-000000000009' });
    expect(r.status).toBe(400);
    expect(r.text).toContain('must match');
    expect((await http(a.url, 'PUT', `/v1/connect/intentions/${id}`, { ...intention('web', 'db', 'deny'), ID: id })).status).toBe(200);
  });

  test('updating or deleting an unknown intention fails', async () => {
    const id = '00000000-0000-0000-0000-00000000000a';
    const u = await http(a.url, 'PUT', `/v1/connect/intentions/${id}`, intention('a', 'b'));
    expect(u.status).toBe(400);
    expect(u.text).toBe(`Cannot modify non-existent intention: '${id}'`);
    const d = await http(a.url, 'DELETE', `/v1/connect/intentions/${id}`);
    expect(d.status).toBe(400);
  });

  test('other verbs on /match and /check are 405', async () => {
    const r = await http(a.url, 'PUT', '/v1/connect/intentions/match', intention('a', 'b'));
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('OPTIONS,GET');
  });
});

describe('list, match and check', () => {
  beforeEach(async () => {
    for (const [s, d, act] of [['*', '*', 'deny'], ['web', 'db', 'deny'], ['*', 'db', 'allow'], ['web', '*', 'allow'], ['api', 'db', 'allow']]) {
      expect((await create(intention(s!, d!, act!))).status).toBe(200);
    }
  });
  const names = (xs: any[]) => xs.map((x) => `${x.SourceName}>${x.DestinationName}:${x.Precedence}`);

  test('list is in evaluation order', async () => {
    const r = await http(a.url, 'GET', '/v1/connect/intentions');
    expect(names(r.json)).toEqual(['api>db:9', 'web>db:9', '*>db:8', 'web>*:6', '*>*:5']);
  });

  test('match by destination with several names', async () => {
    const r = await http(a.url, 'GET', '/v1/connect/intentions/match?by=destination&name=db&name=default/other');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-registry-index')).toBeNull();
    expect(names(r.json.db)).toEqual(['api>db:9', 'web>db:9', '*>db:8', 'web>*:6', '*>*:5']);
    expect(names(r.json['default/other'])).toEqual(['web>*:6', '*>*:5']);
  });

  test('match by source; a name without matches is an empty array (the spec: values are arrays)', async () => {
    await clear();
    await create(intention('web', 'db'));
    const r = await http(a.url, 'GET', '/v1/connect/intentions/match?by=source&name=web&name=api');
    expect(names(r.json.web)).toEqual(['web>db:9']);
    expect(r.json.api).toEqual([]);
  });

  test.each([
    ['?name=db', "required query parameter 'by' not set"],
    ['?by=source&by=destination&name=db', "required query parameter 'by' not set"],
    ['?by=sideways&name=db', "'by' parameter must be one of 'source' or 'destination'"],
    ['?by=source', "required query parameter 'name' not set"],
    ['?by=source&name=a/b/c', 'name "a/b/c" is invalid'],
  ])('match%s is 400: %s', async (q, message) => {
    const r = await http(a.url, 'GET', `/v1/connect/intentions/match${q}`);
    expect(r.status).toBe(400);
    expect(r.text).toContain(message);
  });

  test('check: the first matching intention decides', async () => {
    const allowed = async (s: string, d: string) => (await http(a.url, 'GET', `/v1/connect/intentions/check?source=${s}&destination=${d}`)).json.Allowed;
    expect(await allowed('web', 'db')).toBe(false); // exact deny
    expect(await allowed('api', 'db')).toBe(true); // exact allow
    expect(await allowed('other', 'db')).toBe(true); // * → db allow
    expect(await allowed('web', 'cache')).toBe(true); // web → * allow
    expect(await allowed('other', 'cache')).toBe(false); // * → * deny
  });

  test('check without intentions and ACLs off allows', async () => {
    await clear();
    const r = await http(a.url, 'GET', '/v1/connect/intentions/check?source=x&destination=y');
    expect(r.json).toEqual({ Allowed: true });
    expect(r.headers.get('x-registry-index')).toBeNull();
  });

  test.each([
    ['?destination=db', "required query parameter 'source' not set"],
    ['?source=web', "required query parameter 'destination' not set"],
    ['?source=web&destination=db&source-type=consul', 'unsupported SourceType: "consul"'],
  ])('check%s is 400: %s', async (q, message) => {
    const r = await http(a.url, 'GET', `/v1/connect/intentions/check${q}`);
    expect(r.status).toBe(400);
    expect(r.text).toBe(message);
  });

  test('a blocking list returns when an intention changes', async () => {
    const first = await http(a.url, 'GET', '/v1/connect/intentions');
    const index = first.headers.get('x-registry-index');
    const started = Date.now();
    const pending = http(a.url, 'GET', `/v1/connect/intentions?index=${index}&wait=5s`);
    await new Promise((r) => setTimeout(r, 100));
    await create(intention('late', 'db'));
    const r = await pending;
    expect(Date.now() - started).toBeLessThan(4000);
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(Number(index));
    expect(r.json).toHaveLength(6);
  });
});
