// Every session endpoint, field, default and error case through HTTP, the invalidation paths
// (destroy, TTL expiry, check critical, check and node deregistered), locks handed over between
// sessions, lock-delay and Behavior=delete. TTLs use the test-only floor (session_ttl_min) so
// nothing waits 10 s.
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

let t: TestAgent;
const put = (path: string, body?: unknown) => http(t.url, 'PUT', path, body);
const get = (path: string) => http(t.url, 'GET', path);
const create = async (body?: unknown): Promise<string> => {
  const r = await put('/v1/session/create', body);
  if (r.status !== 200) throw new Error(`session create failed: ${r.status} ${r.text}`);
  return r.json.ID;
};

beforeAll(async () => {
  t = await startDevAgent((c) => {
    c.sessionTtlMinMs = 300;
  });
  const r = await put('/v1/catalog/register', {
    Node: 'box',
    Address: '10.1.0.1',
    Checks: [
      { CheckID: 'serfHealth', Name: 'serf', Status: 'passing' },
      { CheckID: 'disk', Name: 'disk', Status: 'passing' },
      { CheckID: 'broken', Name: 'broken', Status: 'critical' },
    ],
  });
  expect(r.status).toBe(200);
});
afterAll(async () => {
  await t.stop();
});

describe('create', () => {
  test('an empty PUT creates a default session on the agent node', async () => {
    const id = await create();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const r = await get(`/v1/session/info/${id}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual([
      {
        ID: id,
        Name: '',
        Node: 'test-agent',
        Checks: ['serfHealth'],
        LockDelay: 15_000_000_000,
        Behavior: 'release',
        TTL: '',
        CreateIndex: expect.any(Number),
        ModifyIndex: expect.any(Number),
      },
    ]);
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(0);
  });

  test('every body field is kept; keys are case-insensitive', async () => {
    const id = await create({ name: 'worker', node: 'box', checks: ['serfHealth', 'disk'], behavior: 'delete', ttl: '30s', lockdelay: '2s' });
    const s = (await get(`/v1/session/info/${id}`)).json[0];
    expect(s).toMatchObject({ Name: 'worker', Node: 'box', Checks: ['serfHealth', 'disk'], Behavior: 'delete', TTL: '30s', LockDelay: 2e9 });
  });

  test.each([
    [15, 15e9],
    [15_000_000_000, 15e9],
    ['15s', 15e9],
    ['500ms', 5e8],
    ['10ns', 10e9],
    [0, 0],
  ])('LockDelay %p is %p ns', async (given, ns) => {
    const id = await create({ LockDelay: given });
    expect((await get(`/v1/session/info/${id}`)).json[0].LockDelay).toBe(ns);
  });

  test('"Checks": [] drops serfHealth; null keeps no checks either', async () => {
    const a = await create({ Checks: [] });
    expect((await get(`/v1/session/info/${a}`)).json[0].Checks).toEqual([]);
    const b = await create({ Checks: null });
    expect((await get(`/v1/session/info/${b}`)).json[0].Checks).toBeNull();
  });

  test.each([
    [{ Node: 'ghost' }, 'Missing node registration'],
    [{ Node: 'box', Checks: ['nope'] }, "Missing check 'nope' registration"],
    [{ Node: 'box', Checks: ['broken'] }, "Check 'broken' is in critical state"],
    [{ Node: '' }, 'Must provide Node'],
    [{ Behavior: 'vanish' }, "Invalid Behavior setting 'vanish'"],
    [{ TTL: '100ms' }, "Invalid Session TTL '100000000', must be between [300ms=24h0m0s]"],
    [{ TTL: '86401s' }, "Invalid Session TTL '86401000000000', must be between [300ms=24h0m0s]"],
    [{ TTL: 'soon' }, 'Session TTL \'soon\' invalid: time: invalid duration "soon"'],
    [{ LockDelay: '15' }, 'Request decode failed: time: invalid duration "15"'],
    [{ Checks: 'serfHealth' }, 'Request decode failed: Checks must be array,null'],
  ])('%p → 400 %p', async (body, message) => {
    const r = await put('/v1/session/create', body);
    expect(r.status).toBe(400);
    expect(r.text).toContain(message);
  });

  test('TTL 0s means no expiry and is accepted', async () => {
    const id = await create({ TTL: '0s' });
    expect((await get(`/v1/session/info/${id}`)).json[0].TTL).toBe('0s');
  });

  test('create answers only PUT', async () => {
    const r = await http(t.url, 'POST', '/v1/session/create', {});
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('OPTIONS,PUT');
  });
});

describe('reads, renew and destroy', () => {
  test('list is ordered by ID; node lists only that node; unknown info is null', async () => {
    const a = await create({ Node: 'box' });
    const b = await create({ Node: 'box' });
    const list = (await get('/v1/session/list')).json.map((s: any) => s.ID);
    expect(list).toEqual([...list].sort());
    expect(list).toEqual(expect.arrayContaining([a, b]));
    const onBox = (await get('/v1/session/node/BOX')).json;
    expect(onBox.every((s: any) => s.Node === 'box')).toBe(true);
    expect(onBox.map((s: any) => s.ID)).toEqual(expect.arrayContaining([a, b]));
    expect((await get('/v1/session/node/nobody')).json).toEqual([]);
    const unknown = await get('/v1/session/info/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(200);
    expect(unknown.text).toBe('null');
  });

  test('missing path parts are 400s', async () => {
    expect((await get('/v1/session/info/')).text).toBe('Missing session');
    expect((await get('/v1/session/node/')).text).toBe('Missing node name');
    expect((await put('/v1/session/destroy/')).status).toBe(400);
    expect((await put('/v1/session/renew/')).status).toBe(400);
  });

  test('destroy answers true, also for an unknown session; a malformed ID is 400', async () => {
    const id = await create();
    expect((await put(`/v1/session/destroy/${id}`)).json).toBe(true);
    expect((await get(`/v1/session/info/${id}`)).json).toBeNull();
    expect((await put(`/v1/session/destroy/${id}`)).json).toBe(true);
    const bad = await put('/v1/session/destroy/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('UUID must be 36 characters');
  });

  test('renew answers the session in an array; unknown is 404', async () => {
    const id = await create({ TTL: '20s' });
    const r = await put(`/v1/session/renew/${id}`);
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(1);
    expect(r.json[0]).toMatchObject({ ID: id, TTL: '20s' });
    const missing = await put('/v1/session/renew/00000000-0000-4000-8000-000000000001');
    expect(missing.status).toBe(404);
    expect(missing.text).toBe("Session id '00000000-0000-4000-8000-000000000001' not found");
  });

  test('a blocking list returns when a session is created', async () => {
    const first = await get('/v1/session/list');
    const index = first.headers.get('x-registry-index');
    const started = Date.now();
    const blocked = get(`/v1/session/list?index=${index}&wait=5s`);
    await new Promise((r) => setTimeout(r, 100));
    const id = await create();
    const r = await blocked;
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(r.json.map((s: any) => s.ID)).toContain(id);
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(Number(index));
  });
});

describe('invalidation', () => {
  test('a TTL session expires within 2×TTL (plus slack) when not renewed', async () => {
    const id = await create({ TTL: '400ms' });
    await new Promise((r) => setTimeout(r, 300));
    expect((await get(`/v1/session/info/${id}`)).json).not.toBeNull();
    await waitFor(async () => (await get(`/v1/session/info/${id}`)).json === null, 3_000);
  });

  test('renewing keeps a TTL session alive past its TTL', async () => {
    const id = await create({ TTL: '300ms' });
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 150));
      expect((await put(`/v1/session/renew/${id}`)).status).toBe(200);
    }
    expect((await get(`/v1/session/info/${id}`)).json).not.toBeNull();
    await waitFor(async () => (await get(`/v1/session/info/${id}`)).json === null, 3_000);
  });

  const reg = (body: unknown) => put('/v1/catalog/register', body);
  test('a linked check turning critical destroys the session; warning does not', async () => {
    await reg({ Node: 'inv-1', Address: '10.2.0.1', Check: { CheckID: 'c', Name: 'c', Status: 'passing' } });
    const id = await create({ Node: 'inv-1', Checks: ['c'] });
    await reg({ Node: 'inv-1', Address: '10.2.0.1', Check: { CheckID: 'c', Name: 'c', Status: 'warning' } });
    expect((await get(`/v1/session/info/${id}`)).json).not.toBeNull();
    await reg({ Node: 'inv-1', Address: '10.2.0.1', Check: { CheckID: 'c', Name: 'c', Status: 'critical' } });
    expect((await get(`/v1/session/info/${id}`)).json).toBeNull();
  });

  test('deregistering a linked check, or the node, destroys its sessions', async () => {
    await reg({ Node: 'inv-2', Address: '10.2.0.2', Check: { CheckID: 'c', Name: 'c', Status: 'passing' } });
    const byCheck = await create({ Node: 'inv-2', Checks: ['c'] });
    const byNode = await create({ Node: 'inv-2', Checks: [] });
    await put('/v1/catalog/deregister', { Node: 'inv-2', CheckID: 'c' });
    expect((await get(`/v1/session/info/${byCheck}`)).json).toBeNull();
    expect((await get(`/v1/session/info/${byNode}`)).json).not.toBeNull();
    await put('/v1/catalog/deregister', { Node: 'inv-2' });
    expect((await get(`/v1/session/info/${byNode}`)).json).toBeNull();
  });
});

describe('locks', () => {
  const acquire = (key: string, id: string, value = 'held') => http(t.url, 'PUT', `/v1/kv/${key}?acquire=${id}`, value);
  const release = (key: string, id: string) => http(t.url, 'PUT', `/v1/kv/${key}?release=${id}`, 'free');
  const entry = async (key: string) => (await get(`/v1/kv/${key}`)).json[0];

  test('two sessions hand a lock over: only the holder has it, LockIndex counts acquisitions', async () => {
    const a = await create({ LockDelay: 0 });
    const b = await create({ LockDelay: 0 });
    expect((await acquire('locks/one', a)).json).toBe(true);
    expect((await acquire('locks/one', b)).json).toBe(false);
    expect(await entry('locks/one')).toMatchObject({ Session: a, LockIndex: 1 });
    expect((await release('locks/one', b)).json).toBe(false);
    expect((await release('locks/one', a)).json).toBe(true);
    expect(await entry('locks/one')).not.toHaveProperty('Session');
    expect((await acquire('locks/one', b)).json).toBe(true);
    expect(await entry('locks/one')).toMatchObject({ Session: b, LockIndex: 2 });
  });

  test('a lock released by invalidation cannot be re-acquired until its lock-delay ends', async () => {
    const a = await create({ LockDelay: '1s' });
    const b = await create();
    expect((await acquire('locks/delayed', a)).json).toBe(true);
    await put(`/v1/session/destroy/${a}`);
    expect(await entry('locks/delayed')).not.toHaveProperty('Session');
    expect((await acquire('locks/delayed', b)).json).toBe(false);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await acquire('locks/delayed', b)).json).toBe(true);
  });

  test('an explicit release starts no lock-delay', async () => {
    const a = await create({ LockDelay: '10s' });
    const b = await create();
    await acquire('locks/released', a);
    await release('locks/released', a);
    expect((await acquire('locks/released', b)).json).toBe(true);
  });

  test('Behavior=delete deletes the keys the session held', async () => {
    const a = await create({ Behavior: 'delete' });
    await acquire('locks/ephemeral', a);
    await put(`/v1/session/destroy/${a}`);
    expect((await get('/v1/kv/locks/ephemeral')).status).toBe(404);
  });

  test('acquiring with an unknown session is 400', async () => {
    const r = await acquire('locks/x', '00000000-0000-4000-8000-00000000000f');
    expect(r.status).toBe(400);
    expect(r.text).toBe('invalid session "00000000-0000-4000-8000-00000000000f"');
  });

  test('a TTL session that expires releases its lock', async () => {
    const a = await create({ TTL: '300ms', LockDelay: 0 });
    await acquire('locks/ttl', a);
    await waitFor(async () => (await entry('locks/ttl')).Session === undefined, 3_000);
  });

  test('a prepared query bound to a session goes with it', async () => {
    const a = await create();
    const q = await http(t.url, 'POST', '/v1/query', { Session: a, Service: { Service: 'web' } });
    expect(q.status).toBe(200);
    await put(`/v1/session/destroy/${a}`);
    expect((await get(`/v1/query/${q.json.ID}`)).status).toBe(404);
  });
});
