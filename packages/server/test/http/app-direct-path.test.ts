// The HTTP edge's direct path (ordinary requests skip Express's router and body-parser) must
// answer exactly as the Express route table would: same route chosen, same params, query,
// body bytes and errors. Checked on a small route table through real HTTP.
import { createServer, request, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/http/app';
import { route, type Route } from '../../src/http/route';

const echo = (name: string) => (ctx: Parameters<Route['handle']>[0]) => ({
  name,
  params: ctx.params,
  query: { ...ctx.query },
  body: ctx.rawBody === undefined ? null : ctx.rawBody.toString('utf8'),
});

let aborted: () => void = () => undefined;
const routes: Route<any>[] = [
  route({ method: 'GET', path: '/v1/thing/:id', handle: echo('thing-by-id') }),
  route({ method: 'GET', path: '/v1/thing/self', handle: echo('thing-self') }), // shadowed by the route above
  route({ method: 'GET', path: '/v1/list', handle: echo('list') }),
  route({ method: 'PUT', path: '/v1/kv{/*key}', handle: echo('kv-put') }),
  route({ method: 'GET', path: '/v1/opt{/:name}', handle: echo('opt') }),
  route({
    method: 'POST',
    path: '/v1/json',
    body: (v: unknown) => v as object,
    handle: (ctx) => ({ got: ctx.body }),
  }),
  route({
    method: 'GET',
    path: '/v1/wait',
    handle: (ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener('abort', () => {
          aborted();
          resolve('too late');
        });
      }),
  }),
];

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer(createApp(routes, { datacenter: 'dc1', bodyLimit: '1kb' }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function call(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, { method, body, headers });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

describe('routing', () => {
  test('the first matching route wins, as in Express (a param route shadows a later static one)', async () => {
    expect((await call('GET', '/v1/thing/self')).json.name).toBe('thing-by-id');
  });

  test('paths match case-insensitively and with one trailing slash', async () => {
    expect((await call('GET', '/V1/LIST')).json.name).toBe('list');
    expect((await call('GET', '/v1/list/')).json.name).toBe('list');
    expect((await call('GET', '/v1/thing/AbC')).json.params).toEqual({ id: 'AbC' });
  });

  test('params are percent-decoded; a wildcard keeps its slashes, encoded or not', async () => {
    expect((await call('GET', '/v1/thing/a%20b')).json.params).toEqual({ id: 'a b' });
    expect((await call('PUT', '/v1/kv/a%2Fb/c')).json.params).toEqual({ key: 'a/b/c' });
    expect((await call('PUT', '/v1/kv')).json.params).toEqual({});
    expect((await call('GET', '/v1/opt')).json.params).toEqual({});
    expect((await call('GET', '/v1/opt/x')).json.params).toEqual({ name: 'x' });
  });

  test('a param that does not decode is 400 naming it', async () => {
    const r = await call('GET', '/v1/thing/%E0%A4%A');
    expect(r.status).toBe(400);
    expect(r.text).toBe("Failed to decode param '%E0%A4%A'");
  });

  test('unknown paths stay 404 and other verbs 405 (answered by Express)', async () => {
    expect((await call('GET', '/v1/nothing')).status).toBe(404);
    const r = await call('DELETE', '/v1/list');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('OPTIONS,GET');
  });
});

describe('query', () => {
  test('repeated parameters become arrays and empty values stay present', async () => {
    const r = await call('GET', '/v1/list?tag=a&tag=b&stale&dc=x%20y');
    expect(r.json.query).toEqual({ tag: ['a', 'b'], stale: '', dc: 'x y' });
  });

  test('?pretty indents the JSON', async () => {
    const r = await call('GET', '/v1/list?pretty');
    expect(r.text).toBe(JSON.stringify(r.json, null, 4) + '\n');
    expect(r.headers.get('content-length')).toBe(String(Buffer.byteLength(r.text)));
  });
});

describe('bodies', () => {
  test('no body is undefined; an empty body (Content-Length: 0) is empty bytes', async () => {
    expect((await call('GET', '/v1/list')).json.body).toBeNull();
    expect((await call('PUT', '/v1/kv/k')).json.body).toBe('');
    expect((await call('PUT', '/v1/kv/k', '')).json.body).toBe('');
    expect((await call('PUT', '/v1/kv/k', 'héllo')).json.body).toBe('héllo');
  });

  test('a body over the limit is 413', async () => {
    const r = await call('PUT', '/v1/kv/k', 'x'.repeat(2048));
    expect(r.status).toBe(413);
    expect(r.text).toBe('Request body too large');
  });

  test('a gzip body is inflated (through Express) before the route sees it', async () => {
    const r = await call('PUT', '/v1/kv/k', gzipSync('zipped'), { 'Content-Encoding': 'gzip' });
    expect(r.json.body).toBe('zipped');
  });

  test('a chunked body is read whole', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(`${base}/v1/kv/chunked`, { method: 'PUT' }, (res) => {
        let s = '';
        res.on('data', (d) => (s += d));
        res.on('end', () => resolve(s));
      });
      req.on('error', reject);
      req.write('part one, ');
      req.end('part two');
    });
    expect(JSON.parse(text).body).toBe('part one, part two');
  });

  test('JSON bodies are parsed for routes that take them; bad JSON is 400', async () => {
    expect((await call('POST', '/v1/json', '{"a":1}')).json).toEqual({ got: { a: 1 } });
    const bad = await call('POST', '/v1/json', '{"a":');
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/^Request decode failed/);
    const none = await call('POST', '/v1/json');
    expect(none.status).toBe(400);
    expect(none.text).toBe('Request decode failed: EOF');
  });
});

test('a handler waiting on the abort signal hears when the client goes away', async () => {
  const heard = new Promise<void>((r) => (aborted = r));
  const client = new AbortController();
  const pending = fetch(`${base}/v1/wait`, { signal: client.signal }).catch(() => 'aborted');
  await new Promise((r) => setTimeout(r, 100));
  client.abort();
  expect(await pending).toBe('aborted');
  await heard;
});
