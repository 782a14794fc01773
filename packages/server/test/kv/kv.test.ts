// The KV endpoints and /v1/txn through HTTP: values, flags, raw, recurse, keys with a separator,
// CAS on PUT and DELETE, conflicting flags, size limits, %2F in keys, 404s, blocking reads, and
// transactions (results, rollback with 409, read-only transactions, limits).
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

let t: TestAgent;
const get = (path: string) => http(t.url, 'GET', path);
const put = (path: string, body?: string) => http(t.url, 'PUT', path, body);
const del = (path: string) => http(t.url, 'DELETE', path);
const b64 = (s: string) => Buffer.from(s).toString('base64');

beforeAll(async () => {
  t = await startDevAgent();
});
afterAll(async () => {
  await t.stop();
});

describe('single keys', () => {
  test('PUT answers true; GET answers the entry with the value in base64 and the index header', async () => {
    expect((await put('/v1/kv/app/config?flags=42', 'hello')).json).toBe(true);
    const r = await get('/v1/kv/app/config');
    expect(r.status).toBe(200);
    expect(r.json).toEqual([
      { LockIndex: 0, Key: 'app/config', Flags: 42, Value: b64('hello'), CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number) },
    ]);
    expect(r.headers.get('x-registry-index')).toBe(String(r.json[0].ModifyIndex));
    expect(r.headers.get('x-registry-knownleader')).toBe('true');
  });

  test('?raw answers the bytes themselves', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    await fetch(`${t.url}/v1/kv/raw/bin`, { method: 'PUT', body: bytes });
    const r = await fetch(`${t.url}/v1/kv/raw/bin?raw`);
    expect(Buffer.from(await r.arrayBuffer())).toEqual(bytes);
  });

  test('an empty value reads back as null', async () => {
    await put('/v1/kv/empty');
    expect((await get('/v1/kv/empty')).json[0].Value).toBeNull();
  });

  test('a missing key is 404 with an empty body and an index', async () => {
    const r = await get('/v1/kv/does/not/exist');
    expect(r.status).toBe(404);
    expect(r.text).toBe('');
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(0);
  });

  test('%2F inside a path segment is part of the key', async () => {
    await put('/v1/kv/enc%2Fkey', 'v');
    expect((await get('/v1/kv/enc/key')).json[0].Key).toBe('enc/key');
  });

  test('an empty key is 400 Missing key name', async () => {
    expect((await get('/v1/kv/')).text).toBe('Missing key name');
    expect((await put('/v1/kv/', 'x')).text).toBe('Missing key name');
    expect((await del('/v1/kv/')).text).toBe('Missing key name');
  });

  test('values over 512 KiB are 413', async () => {
    const r = await put('/v1/kv/big', 'x'.repeat(512 * 1024 + 1));
    expect(r.status).toBe(413);
    expect(r.text).toBe('Value exceeds 524288 byte limit');
    expect((await put('/v1/kv/big', 'x'.repeat(512 * 1024))).json).toBe(true);
  });

  test('bad flags are 400; cas, acquire and release together are 400 Conflicting flags', async () => {
    expect((await put('/v1/kv/f?flags=abc', 'x')).status).toBe(400);
    const r = await put('/v1/kv/f?cas=0&acquire=abc', 'x');
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/^Conflicting flags: /);
    expect((await del('/v1/kv/f?recurse&cas=1')).text).toMatch(/^Conflicting flags: /);
  });

  test('cas=0 creates only; cas=<ModifyIndex> replaces; a stale index answers false', async () => {
    expect((await put('/v1/kv/cas/k?cas=0', 'one')).json).toBe(true);
    expect((await put('/v1/kv/cas/k?cas=0', 'two')).json).toBe(false);
    const index = (await get('/v1/kv/cas/k')).json[0].ModifyIndex;
    expect((await put(`/v1/kv/cas/k?cas=${index + 1000}`, 'two')).json).toBe(false);
    expect((await put(`/v1/kv/cas/k?cas=${index}`, 'two')).json).toBe(true);
    expect((await get('/v1/kv/cas/k')).json[0].Value).toBe(b64('two'));
  });

  test('DELETE answers true; with cas only at the right index', async () => {
    await put('/v1/kv/del/k', 'v');
    const index = (await get('/v1/kv/del/k')).json[0].ModifyIndex;
    expect((await del(`/v1/kv/del/k?cas=${index - 1}`)).json).toBe(false);
    expect((await del(`/v1/kv/del/k?cas=${index}`)).json).toBe(true);
    expect((await get('/v1/kv/del/k')).status).toBe(404);
    expect((await del('/v1/kv/del/k')).json).toBe(true);
  });
});

describe('prefixes', () => {
  beforeAll(async () => {
    for (const k of ['tree/a', 'tree/b/c', 'tree/b/d', 'tree/e/', 'treetop']) await put(`/v1/kv/${k}`, k);
  });

  test('?recurse answers every entry under the prefix in key order; none is 404', async () => {
    const r = await get('/v1/kv/tree/?recurse');
    expect(r.json.map((e: any) => e.Key)).toEqual(['tree/a', 'tree/b/c', 'tree/b/d', 'tree/e/']);
    expect((await get('/v1/kv/nothing-here/?recurse')).status).toBe(404);
  });

  test('?keys lists keys; with a separator, folders collapse', async () => {
    expect((await get('/v1/kv/tree/?keys')).json).toEqual(['tree/a', 'tree/b/c', 'tree/b/d', 'tree/e/']);
    expect((await get('/v1/kv/tree/?keys&separator=/')).json).toEqual(['tree/a', 'tree/b/', 'tree/e/']);
    expect((await get('/v1/kv/tree?keys&separator=/')).json).toEqual(['tree/', 'treetop']);
    expect((await get('/v1/kv/none/?keys')).status).toBe(404);
  });

  test('DELETE ?recurse removes the subtree only', async () => {
    await put('/v1/kv/sub/x', '1');
    await put('/v1/kv/sub/y', '2');
    await put('/v1/kv/subway', '3');
    expect((await del('/v1/kv/sub/?recurse')).json).toBe(true);
    expect((await get('/v1/kv/sub?keys')).json).toEqual(['subway']);
  });

  test('a blocking recurse returns when a key under the prefix changes, not for others', async () => {
    const first = await get('/v1/kv/watch/?recurse');
    const index = first.headers.get('x-registry-index');
    const started = Date.now();
    const blocked = get(`/v1/kv/watch/?recurse&index=${index}&wait=3s`);
    await new Promise((r) => setTimeout(r, 100));
    await put('/v1/kv/elsewhere', 'x');
    await new Promise((r) => setTimeout(r, 100));
    await put('/v1/kv/watch/me', 'now');
    const r = await blocked;
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(r.json.map((e: any) => e.Key)).toEqual(['watch/me']);
  });

  test('a blocking get on a deleted prefix wakes and its index does not go backwards', async () => {
    await put('/v1/kv/gone/k', 'x');
    const before = await get('/v1/kv/gone/?recurse');
    const index = Number(before.headers.get('x-registry-index'));
    const blocked = get(`/v1/kv/gone/?recurse&index=${index}&wait=3s`);
    await new Promise((r) => setTimeout(r, 100));
    await del('/v1/kv/gone/k');
    const r = await blocked;
    expect(r.status).toBe(404);
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(index);
  });

  test('?stale and ?consistent reads answer the same entry', async () => {
    expect((await get('/v1/kv/tree/a?stale')).json[0].Key).toBe('tree/a');
    expect((await get('/v1/kv/tree/a?consistent')).json[0].Key).toBe('tree/a');
  });
});

describe('/v1/txn', () => {
  const txn = (ops: unknown, method = 'PUT') => http(t.url, method, '/v1/txn', ops);

  test('applies every op atomically and answers the results in order', async () => {
    await put('/v1/kv/txn/x', 'old');
    const index = (await get('/v1/kv/txn/x')).json[0].ModifyIndex;
    const r = await txn([
      { KV: { Verb: 'set', Key: 'txn/a', Value: b64('1'), Flags: 7 } },
      { KV: { Verb: 'cas', Key: 'txn/x', Value: b64('new'), Index: index } },
      { KV: { Verb: 'get', Key: 'txn/a' } },
      { kv: { verb: 'delete', key: 'txn/nothing' } },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.Errors).toBeNull();
    expect(r.json.Results).toHaveLength(3);
    expect(r.json.Results[0].KV).toMatchObject({ Key: 'txn/a', Flags: 7, Value: null });
    expect(r.json.Results[2].KV).toMatchObject({ Key: 'txn/a', Value: b64('1') });
    expect(r.json.Results[0].KV.ModifyIndex).toBe(r.json.Results[1].KV.ModifyIndex);
    expect((await get('/v1/kv/txn/x')).json[0].Value).toBe(b64('new'));
  });

  test('POST works too', async () => {
    expect((await txn([{ KV: { Verb: 'set', Key: 'txn/post', Value: b64('p') } }], 'POST')).status).toBe(200);
  });

  test('one failing op rolls everything back: 409 with each error and its op index', async () => {
    const r = await txn([
      { KV: { Verb: 'set', Key: 'txn/never', Value: b64('no') } },
      { KV: { Verb: 'check-index', Key: 'txn/x', Index: 1 } },
      { KV: { Verb: 'get', Key: 'txn/missing' } },
    ]);
    expect(r.status).toBe(409);
    expect(r.json.Results).toBeNull();
    expect(r.json.Errors).toEqual([
      { OpIndex: 1, What: expect.stringContaining('current modify index') },
      { OpIndex: 2, What: 'key "txn/missing" doesn\'t exist' },
    ]);
    expect((await get('/v1/kv/txn/never')).status).toBe(404);
  });

  test('a read-only transaction is answered as a read with an index', async () => {
    const r = await txn([{ KV: { Verb: 'get', Key: 'txn/a' } }, { KV: { Verb: 'check-not-exists', Key: 'txn/none' } }]);
    expect(r.status).toBe(200);
    expect(r.json.Results[0].KV.Value).toBe(b64('1'));
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(0);
  });

  test('lock, check-session and unlock inside a transaction', async () => {
    const id = (await http(t.url, 'PUT', '/v1/session/create', { LockDelay: 0 })).json.ID;
    const locked = await txn([
      { KV: { Verb: 'lock', Key: 'txn/lock', Session: id, Value: b64('me') } },
      { KV: { Verb: 'check-session', Key: 'txn/lock', Session: id } },
    ]);
    expect(locked.status).toBe(200);
    expect(locked.json.Results[0].KV).toMatchObject({ Session: id, LockIndex: 1 });
    const other = (await http(t.url, 'PUT', '/v1/session/create')).json.ID;
    const refused = await txn([{ KV: { Verb: 'lock', Key: 'txn/lock', Session: other } }]);
    expect(refused.status).toBe(409);
    expect((await txn([{ KV: { Verb: 'unlock', Key: 'txn/lock', Session: id } }])).status).toBe(200);
  });

  test('more than 64 ops is 413; a bad verb or bad base64 is 400; a non-array is 400', async () => {
    const ops = Array.from({ length: 65 }, (_, i) => ({ KV: { Verb: 'set', Key: `txn/many/${i}` } }));
    const many = await txn(ops);
    expect(many.status).toBe(413);
    expect(many.text).toBe('Transaction contains too many operations (65 > 64)');
    expect((await txn([{ KV: { Verb: 'explode', Key: 'k' } }])).status).toBe(400);
    expect((await txn([{ KV: { Verb: 'set', Key: 'k', Value: '!!!' } }])).status).toBe(400);
    expect((await txn({ KV: {} })).status).toBe(400);
  });
});
