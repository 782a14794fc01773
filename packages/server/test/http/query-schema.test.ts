// Schema-first routes (issue 13, item 5): a route declares its query and params schemas, and the
// edge reads the query through them before the handler runs — a value the schema refuses is a 400
// with the field's reason, a good one arrives coerced (presence flags as booleans, numbers parsed
// with Go's grammar, lists as arrays, the first of repeated one-valued names). Checked through real
// HTTP on both roads of app.ts: the direct path and Express (a path in other letter case).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Type } from '@sinclair/typebox';
import { createApp } from '../../src/http/app';
import { route, type Route } from '../../src/http/route';
import { readQuery, writeQuery } from '../../src/schemas/query-options';
import { Duration, Flag, GoBool, Int, List, RequiredText, RequiredUuid, RequiredWords, Text, Uint, Uint64Field } from '../../src/schemas/query-fields';

const ITEMS_QUERY = readQuery({
  recurse: Flag(),
  limit: Int((v: string) => `Bad limit: ${JSON.stringify(v)}`, 0),
  cas: Uint('Invalid cas'),
  flags: Uint64Field('Invalid flags'),
  tag: List(),
  name: Text(),
  connect: GoBool('Invalid connect'),
  timeout: Duration((v: string) => `Invalid timeout "${v}"`),
  mode: RequiredWords({ fast: 'fast', slow: 'slow' } as const, (v?: string) => (v ? `Unknown mode ${v}` : 'Missing mode')),
});
const ITEM_PARAMS = Type.Object({ id: RequiredUuid((v?: string) => (v ? `Invalid ID '${v}'` : 'Missing ID')) });
const NAMED_PARAMS = Type.Object({ name: RequiredText('Missing name') });

const routes: Route[] = [
  route({
    method: 'GET',
    path: '/v1/items',
    query: ITEMS_QUERY,
    handle: ({ query, opts }) => ({ query: { ...query, flags: typeof query.flags === 'bigint' ? `${query.flags}n` : query.flags }, minIndex: opts.minIndex, consistency: opts.consistency }),
  }),
  route({ method: 'GET', path: '/v1/item/:id', params: ITEM_PARAMS, handle: ({ params }) => params }),
  route({ method: 'GET', path: '/v1/named{/:name}', params: NAMED_PARAMS, handle: ({ params }) => params }),
  route({ method: 'PUT', path: '/v1/items', query: writeQuery({ cas: Uint('Invalid cas') }), handle: ({ query, opts }) => ({ query, dc: opts.datacenter }) }),
  route({ method: 'GET', path: '/v1/plain', handle: ({ query, opts }) => ({ query: { ...query }, minIndex: opts.minIndex }) }),
];

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer(createApp(routes, { datacenter: 'dc1' }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function call(method: string, path: string) {
  const res = await fetch(base + path, { method });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

// Each case runs on the direct path and, with the path in upper case, through Express.
const roads: [string, (p: string) => string][] = [
  ['direct path', (p) => p],
  ['Express', (p) => p.replace('/v1/items', '/V1/ITEMS').replace('/v1/item/', '/V1/ITEM/').replace('/v1/named', '/V1/NAMED')],
];

describe.each(roads)('a route query schema (%s)', (_road, at) => {
  test('coerces good values: flags by presence, Go numbers, lists, durations, words; shared options too', async () => {
    const r = await call('GET', at('/v1/items?recurse&limit=-3&cas=12&flags=18446744073709551615&tag=a&name=x&name=y&connect=T&timeout=1m30s&mode=fast&index=7&stale='));
    expect(r.status).toBe(200);
    expect(r.json.query).toMatchObject({
      recurse: true,
      limit: -3,
      cas: 12,
      flags: '18446744073709551615n',
      tag: ['a'],
      name: 'x', // repeated one-valued name: the first counts (Go's url.Values.Get)
      connect: true,
      timeout: 90_000,
      mode: 'fast',
      index: 7,
      stale: true,
      consistent: false,
    });
    expect(r.json.minIndex).toBe(7);
    expect(r.json.consistency).toBe('stale');
  });

  test('absent flags are false, absent values absent, an empty limit is its emptyAs', async () => {
    const r = await call('GET', at('/v1/items?mode=slow&limit=&tag=a&tag=b'));
    expect(r.status).toBe(200);
    expect(r.json.query.recurse).toBe(false);
    expect(r.json.query.limit).toBe(0);
    expect(r.json.query.tag).toEqual(['a', 'b']);
    expect('cas' in r.json.query).toBe(false);
  });

  test.each([
    ['/v1/items?mode=fast&cas=1e3', 'Invalid cas'],
    ['/v1/items?mode=fast&cas=%2012', 'Invalid cas'],
    ['/v1/items?mode=fast&cas=-1', 'Invalid cas'],
    ['/v1/items?mode=fast&limit=ten', 'Bad limit: "ten"'],
    ['/v1/items?mode=fast&flags=18446744073709551616', 'Invalid flags'],
    ['/v1/items?mode=fast&connect=yes', 'Invalid connect'],
    ['/v1/items?mode=fast&timeout=soon', 'Invalid timeout "soon"'],
    ['/v1/items?mode=quick', 'Unknown mode quick'],
    ['/v1/items', 'Missing mode'],
    ['/v1/items?mode=fast&index=abc', 'Invalid index'],
    ['/v1/items?mode=fast&wait=-1s', 'Invalid wait time'],
    ['/v1/items?mode=fast&max_stale=x', 'Invalid max_stale value "x"'],
    ['/v1/items?mode=fast&stale&consistent', 'Cannot specify ?stale with ?consistent, conflicting semantics.'],
  ])('%s → 400 %s', async (path, reason) => {
    const r = await call('GET', at(path));
    expect(r.status).toBe(400);
    expect(r.text).toBe(reason);
  });

  test('path params: a UUID param refuses a malformed one with its reason; an absent optional param is its missing reason', async () => {
    expect((await call('GET', at('/v1/item/8f246b77-f3e1-ff88-5b48-8ec93abf3e05'))).json).toEqual({ id: '8f246b77-f3e1-ff88-5b48-8ec93abf3e05' });
    const bad = await call('GET', at('/v1/item/nope'));
    expect([bad.status, bad.text]).toEqual([400, "Invalid ID 'nope'"]);
    expect((await call('GET', at('/v1/named/web'))).json).toEqual({ name: 'web' });
    const missing = await call('GET', at('/v1/named'));
    expect([missing.status, missing.text]).toEqual([400, 'Missing name']);
  });
});

test('a write reads only dc and token of the shared options (a bad index is not its business)', async () => {
  const r = await call('PUT', '/v1/items?cas=3&index=abc&dc=dc9');
  expect(r.status).toBe(200);
  expect(r.json).toEqual({ query: { cas: 3, dc: 'dc9', pretty: false }, dc: 'dc9' });
  expect((await call('PUT', '/v1/items?cas=x')).text).toBe('Invalid cas');
});

test('a route without a query schema sees the names as sent, and the shared options are still checked', async () => {
  const r = await call('GET', '/v1/plain?stale&tag=a&tag=b&index=4');
  expect(r.json).toEqual({ query: { stale: '', tag: ['a', 'b'], index: '4' }, minIndex: 4 });
  const bad = await call('GET', '/v1/plain?index=-4');
  expect([bad.status, bad.text]).toEqual([400, 'Invalid index']);
});

test('a query schema without the shared options is refused when the route is declared', () => {
  expect(() => route({ method: 'GET', path: '/v1/x', query: Type.Object({ a: Text() }), handle: () => null })).toThrow(/lacks the shared option dc/);
});
