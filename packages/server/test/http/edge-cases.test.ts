// Edges of the HTTP API, seen through HTTP only: requests Node's parser refuses get a status and a
// one-line reason, receive timeouts cut slow senders but not blocking queries, repeated query
// parameters take the first value, node metadata is bounded as Consul bounds it, bad join
// addresses and prepared queries without a service are 400s.
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { applyConfigFile, defaultConfig } from '@registry/server';
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 1_500;

let t: TestAgent;
beforeAll(async () => {
  t = await startDevAgent((c) => {
    c.http.headersTimeoutMs = HEADERS_TIMEOUT_MS;
    c.http.requestTimeoutMs = REQUEST_TIMEOUT_MS;
  });
});
afterAll(async () => {
  await t.stop();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection (within the wait). */
  closed: boolean;
  elapsedMs: number;
}

/** Sends `data` on a fresh connection (optionally stalling after it) and reads what comes back. */
function raw(data: string | Buffer, waitMs = 3_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(t.agent.httpPort, '127.0.0.1', () => socket.write(data));
    const chunks: Buffer[] = [];
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) {
        reject(new Error(`no HTTP answer (closed: ${closed}): ${JSON.stringify(text)}`));
        return;
      }
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4), closed, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      finish();
    });
  });
}

function expectOneLineReason(a: RawAnswer, status: number, reason: RegExp): void {
  expect(a.status).toBe(status);
  expect(a.headers['content-type']).toMatch(/^text\/plain/);
  expect(a.body).toMatch(reason);
  expect(a.body).not.toMatch(/\n/);
  expect(Number(a.headers['content-length'])).toBe(Buffer.byteLength(a.body));
  expect(a.closed).toBe(true);
}

describe("requests Node's HTTP parser refuses", () => {
  test('an unknown method is 501 naming it', async () => {
    expectOneLineReason(await raw('FOO /v1/status/leader HTTP/1.1\r\nHost: x\r\n\r\n'), 501, /^method FOO not implemented$/);
  });

  test('bytes that are no method at all (a TLS handshake) are 400', async () => {
    const hello = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]);
    expectOneLineReason(await raw(hello), 400, /TLS handshake/);
  });

  test('raw non-ASCII bytes in the path are 400 asking for percent-encoding', async () => {
    const a = await raw(Buffer.from('GET /v1/kv/caf\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n', 'utf8'));
    expectOneLineReason(a, 400, /^malformed HTTP request: .*url.*percent-encode/i);
  });

  test('headers over 16 KiB are 431', async () => {
    const a = await raw(`GET /v1/status/leader HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectOneLineReason(a, 431, /^request header fields too large: at most 16384 bytes/);
  });

  test('Content-Length together with Transfer-Encoding is 400', async () => {
    const a = await raw('PUT /v1/kv/te HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
    expectOneLineReason(a, 400, /^malformed HTTP request: Transfer-Encoding can't be present with Content-Length$/);
  });

  test('an HTTP/2 preface is 505', async () => {
    expectOneLineReason(await raw('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), 505, /HTTP\/2 is not served here/);
  });

  test('a chunked DELETE is accepted by Node and answered as any DELETE', async () => {
    const a = await raw('DELETE /v1/kv/chunked-delete HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n');
    expect(a.status).toBe(200);
    expect(a.body).toBe('true');
  });

  test('the server keeps answering after all of these', async () => {
    const r = await http(t.url, 'GET', '/v1/status/leader');
    expect(r.status).toBe(200);
  });
});

describe('receive timeouts', () => {
  test('headers not finished in time are 408 and the connection is closed', async () => {
    const a = await raw('GET /v1/status/leader HTTP/1.1\r\nHost: x\r\n', 5_000);
    expectOneLineReason(a, 408, /^request timeout: the request was not received in time \(headers within 1s, the whole request within 1\.5s\)$/);
    expect(a.elapsedMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(a.elapsedMs).toBeLessThan(4_000);
  });

  test('a connection that sends nothing is closed with a 408 too', async () => {
    const a = await raw('', 5_000);
    expect(a.status).toBe(408);
    expect(a.closed).toBe(true);
  });

  test('a body not finished in time is 408', async () => {
    const a = await raw('PUT /v1/kv/slow-body HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab', 5_000);
    expectOneLineReason(a, 408, /^request timeout/);
    expect((await http(t.url, 'GET', '/v1/kv/slow-body')).status).toBe(404);
  });

  test('an idle keep-alive connection outlives the headers timeout (only a started request is timed)', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: t.agent.httpPort, path: '/v1/status/leader', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      expect(await get()).toEqual({ status: 200, reused: false });
      await new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS + 1_000));
      expect(await get()).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });

  test('blocking queries wait longer than the request timeout: woken by a write, or at the end of `wait`', async () => {
    const first = await http(t.url, 'PUT', '/v1/kv/edge-block-a', 'one');
    expect(first.status).toBe(200);
    await http(t.url, 'PUT', '/v1/kv/edge-block-b', 'one');
    const a0 = await http(t.url, 'GET', '/v1/kv/edge-block-a');
    const b0 = await http(t.url, 'GET', '/v1/kv/edge-block-b');
    const indexA = Number(a0.headers.get('x-registry-index'));
    const indexB = Number(b0.headers.get('x-registry-index'));
    const started = Date.now();
    const woken = http(t.url, 'GET', `/v1/kv/edge-block-a?index=${indexA}&wait=5s`).then((r) => ({ r, ms: Date.now() - started }));
    const timedOut = http(t.url, 'GET', `/v1/kv/edge-block-b?index=${indexB}&wait=5s`).then((r) => ({ r, ms: Date.now() - started }));
    await new Promise((r) => setTimeout(r, 2_500));
    await http(t.url, 'PUT', '/v1/kv/edge-block-a', 'two');
    const w = await woken;
    expect(w.r.status).toBe(200);
    expect(w.ms).toBeGreaterThanOrEqual(2_400);
    expect(Number(w.r.headers.get('x-registry-index'))).toBeGreaterThan(indexA);
    expect(Buffer.from(w.r.json[0].Value, 'base64').toString()).toBe('two');
    const o = await timedOut;
    expect(o.r.status).toBe(200);
    expect(o.ms).toBeGreaterThanOrEqual(4_900);
    expect(Number(o.r.headers.get('x-registry-index'))).toBe(indexB);
  }, 20_000);
});

describe('repeated query parameters: the first value counts, as in Consul', () => {
  test('index', async () => {
    expect((await http(t.url, 'GET', '/v1/catalog/nodes?index=abc&index=1&wait=1ms')).status).toBe(400);
    const ok = await http(t.url, 'GET', '/v1/catalog/nodes?index=1&index=abc&wait=1ms');
    expect(ok.status).toBe(200);
  });

  test('dc', async () => {
    const remote = await http(t.url, 'GET', '/v1/catalog/nodes?dc=nowhere&dc=dc1');
    expect(remote.status).toBe(500);
    expect(remote.text).toBe('No path to datacenter');
    expect((await http(t.url, 'GET', '/v1/catalog/nodes?dc=dc1&dc=nowhere')).status).toBe(200);
  });

  test('a write reads the first dc too', async () => {
    const r = await http(t.url, 'PUT', '/v1/kv/dup-dc?dc=nowhere&dc=dc1', 'v');
    expect(r.status).toBe(500);
    expect((await http(t.url, 'PUT', '/v1/kv/dup-dc?dc=dc1&dc=nowhere', 'v')).json).toBe(true);
  });

  test('list parameters still take every value', async () => {
    await http(t.url, 'PUT', '/v1/catalog/register', { Node: 'dup-meta', Address: '10.7.0.1', NodeMeta: { a: '1', b: '2' } });
    const both = await http(t.url, 'GET', '/v1/catalog/nodes?node-meta=a:1&node-meta=b:2');
    expect(both.json.map((n: any) => n.Node)).toEqual(['dup-meta']);
    const none = await http(t.url, 'GET', '/v1/catalog/nodes?node-meta=a:1&node-meta=b:3');
    expect(none.json).toEqual([]);
  });
});

describe('node metadata is bounded as Consul bounds it', () => {
  const register = (node: string, NodeMeta: Record<string, string>) => http(t.url, 'PUT', '/v1/catalog/register', { Node: node, Address: '10.8.0.1', NodeMeta });
  const exists = async (node: string) => (await http(t.url, 'GET', `/v1/catalog/node/${node}`)).json !== null;
  const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

  test.each([
    ['65 pairs', pairs(65), 'Node metadata cannot contain more than 64 key/value pairs'],
    ['a 129-character key', { ['k'.repeat(129)]: 'v' }, 'Key is too long (limit: 128 characters)'],
    ['a 513-character value', { k: 'v'.repeat(513) }, 'Value is too long (limit: 512 characters)'],
    ['a key with a space', { 'bad key': 'v' }, 'Key contains invalid characters'],
    ['a key with a dot', { 'a.b': 'v' }, 'Key contains invalid characters'],
    ['an empty key', { '': 'v' }, 'Key cannot be blank'],
    ['the reserved prefix', { 'registry-mine': 'v' }, "Key prefix 'registry-' is reserved for internal use"],
  ])('%s is 400 and writes nothing', async (_what, meta, reason) => {
    const node = `meta-bad-${Math.random().toString(36).slice(2, 8)}`;
    const r = await register(node, meta);
    expect(r.status).toBe(400);
    expect(r.text).toBe(`Invalid Node Meta: ${reason}`);
    expect(await exists(node)).toBe(false);
  });

  test('the limits themselves are accepted', async () => {
    expect((await register('meta-64', pairs(64))).status).toBe(200);
    expect((await register('meta-128', { ['k'.repeat(128)]: 'v'.repeat(512), 'Mixed_Case-9': '' })).status).toBe(200);
    const node = (await http(t.url, 'GET', '/v1/catalog/node/meta-128')).json.Node;
    expect(node.Meta['k'.repeat(128)]).toHaveLength(512);
  });

  test("a node read back from the catalog, with the registry's own segment key, registers again", async () => {
    const self = (await http(t.url, 'GET', '/v1/catalog/node/test-agent')).json.Node;
    expect(self.Meta).toHaveProperty('registry-network-segment');
    const r = await register('meta-copy', self.Meta);
    expect(r.status).toBe(200);
  });
});

describe('PUT /v1/agent/join/:address', () => {
  test.each(['not%20an%20address', 'foo:bar', '10.0.0.1:99999', '999.1.1.1', '-bad-.example', 'a..b', 'host:1:2:x'])('%s is 400 with a one-line reason', async (address) => {
    const r = await http(t.url, 'PUT', `/v1/agent/join/${address}`);
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/^Invalid join address ".*": expected IP, IP:port, hostname or hostname:port$/);
    expect(r.text).toContain(decodeURIComponent(address));
  });

  test('a well-formed address nobody answers on is still a server-side failure', async () => {
    const r = await http(t.url, 'PUT', '/v1/agent/join/127.0.0.1:1');
    expect(r.status).toBe(500);
    expect(r.text).toMatch(/^failed to join 127\.0\.0\.1:1/);
  });
});

describe('POST /v1/query without a service', () => {
  test.each([
    ['no Service', { Name: 'no-service' }],
    ['a null Service', { Name: 'no-service', Service: null }],
    ['an empty Service', { Name: 'no-service', Service: {} }],
    ['an empty Service.Service', { Name: 'no-service', Service: { Service: '' } }],
  ])('%s is 400 saying so, and stores nothing', async (_what, body) => {
    const r = await http(t.url, 'POST', '/v1/query', body);
    expect(r.status).toBe(400);
    expect(r.text).toBe('Invalid prepared query: Must provide a Service name to query');
    expect((await http(t.url, 'GET', '/v1/query')).json).toEqual([]);
  });

  test('a Service given as a string instead of an object is 400 naming the field', async () => {
    const r = await http(t.url, 'POST', '/v1/query', { Name: 'q', Service: 'web' });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/^Request decode failed: Service /);
  });
});

describe('configuration', () => {
  test('http_config timeouts and limits.http_max_conns* are read from a config file', () => {
    const c = applyConfigFile(defaultConfig(), {
      http_config: { headers_timeout: '5s', request_timeout: '1m', idle_timeout: '30s' },
      limits: { http_max_conns: 1000, http_max_conns_per_client: 100 },
    });
    expect(c.http).toEqual({ headersTimeoutMs: 5_000, requestTimeoutMs: 60_000, idleTimeoutMs: 30_000, maxConns: 1000, maxConnsPerClient: 100 });
    expect(() => applyConfigFile(defaultConfig(), { http_config: { request_timeout: 30 } })).toThrow(/http_config.request_timeout must be a duration/);
    expect(() => applyConfigFile(defaultConfig(), { limits: { http_max_conns: 0 } })).toThrow(/limits.http_max_conns must be an integer ≥ 1/);
  });
});
