// The HTTP edge against a real agent process (issue 33 findings 9 and 10): a parse error that
// follows a valid request in the same packet is answered after that request's own answer, in
// order, naming what failed to parse; a join to a host that does not exist is a 400; deeply nested
// JSON is a 400 that states the limit; the UI is served with its security headers.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, waitFor } from '../support/dev-agent';
import { freePorts } from '../support/ports';
import { spawnAgent, type AgentProcess } from '../support/processes';

jest.setTimeout(90_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-edges-'));
let agent: AgentProcess;

beforeAll(async () => {
  const [httpPort, serverPort] = await freePorts(2);
  agent = spawnAgent(['-dev', '-node', 'edge-agent', '-dns-port', '-1'], httpPort, serverPort, join(dir, 'agent.log'));
  await waitFor(async () => (await (await fetch(`${agent.url}/v1/status/leader`)).json()) !== '', 20_000, 100);
});

afterAll(async () => {
  if (agent && agent.child.exitCode === null) {
    agent.child.kill('SIGKILL');
    await agent.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Send `bytes` in one write on a fresh connection; every HTTP answer read until the server closes it. */
function exchange(bytes: string): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(agent.httpPort, '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection; read so far: ${JSON.stringify(Buffer.concat(chunks).toString())}`));
    }, 15_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseAnswers(Buffer.concat(chunks).toString('utf8')));
    });
  });
}

/** Consecutive HTTP/1.1 answers, each with a Content-Length (or chunked, as JSON answers may be). */
function parseAnswers(text: string): Answer[] {
  const out: Answer[] = [];
  let rest = text;
  while (rest.length > 0) {
    const split = rest.indexOf('\r\n\r\n');
    if (split < 0) throw new Error(`a partial answer: ${JSON.stringify(rest)}`);
    const [statusLine, ...lines] = rest.slice(0, split).split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    let body = '';
    let after = rest.slice(split + 4);
    if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const eol = after.indexOf('\r\n');
        const size = parseInt(after.slice(0, eol), 16);
        after = after.slice(eol + 2);
        if (size === 0) {
          after = after.slice(2);
          break;
        }
        body += after.slice(0, size);
        after = after.slice(size + 2);
      }
    } else {
      const length = Number(headers['content-length'] ?? 0);
      body = after.slice(0, length);
      after = after.slice(length);
    }
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body });
    rest = after;
  }
  return out;
}

describe('a parse error after a valid request in the same packet', () => {
  test('the DELETE gets its own answer first and is applied; the parse error is answered after it, naming the bytes', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await http(agent.url, 'PUT', `/v1/kv/pipelined-${i}`, 'v')).status).toBe(200);
      const answers = await exchange(`DELETE /v1/kv/pipelined-${i} HTTP/1.1\r\nHost: x\r\n\r\n{"a":1}`);
      expect(answers.map((a) => a.status)).toEqual([200, 400]);
      expect(answers[0]!.body).toBe('true');
      expect(answers[1]!.body).toMatch(/^malformed HTTP request: no method in "\{\\"a\\":1\}" after the previous request/);
      expect(answers[1]!.body).not.toMatch(/DELETE|\n/);
      expect((await http(agent.url, 'GET', `/v1/kv/pipelined-${i}`)).status).toBe(404);
    }
  });

  test('several requests before the bad bytes are all answered, in order, before the refusal', async () => {
    await http(agent.url, 'PUT', '/v1/kv/order', 'x');
    const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
    // The first waits for a blocking query's short wait, so the others are queued behind it.
    const answers = await exchange(get('/v1/kv/order?index=1000000&wait=300ms') + get('/v1/status/leader') + get('/v1/kv/missing') + 'BREW /pot HTTP/1.1\r\n\r\n');
    expect(answers.map((a) => a.status)).toEqual([200, 200, 404, 501]);
    expect(answers[3]!.body).toBe('method BREW not implemented');
  });

  test("a request whose own body does not parse (a bad chunk) is refused at once, in its place", async () => {
    const started = Date.now();
    const answers = await exchange('PUT /v1/kv/chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n');
    expect(answers.map((a) => [a.status, a.body])).toEqual([[400, 'malformed HTTP request: invalid character in chunk size']]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await http(agent.url, 'GET', '/v1/kv/chunked')).status).toBe(404);
  });

  test('an unknown method alone still names it (501), and the agent goes on answering', async () => {
    const answers = await exchange('FOO /v1/status/leader HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answers.map((a) => [a.status, a.body])).toEqual([[501, 'method FOO not implemented']]);
    expect((await http(agent.url, 'GET', '/v1/status/leader')).status).toBe(200);
  });
});

describe('smaller edge refusals', () => {
  test('PUT /v1/agent/join/<a host that does not exist> is a 400 naming it', async () => {
    const r = await http(agent.url, 'PUT', '/v1/agent/join/no-such-host.invalid');
    expect(r.status).toBe(400);
    expect(r.text).toBe('Invalid join address "no-such-host.invalid": no such host "no-such-host.invalid"');
  });

  test.each([
    ['PUT', '/v1/txn'],
    ['PUT', '/v1/catalog/register'],
    ['PUT', '/v1/agent/service/register'],
    ['POST', '/v1/query'],
  ])('%s %s with JSON nested 100,000 deep is a 400 stating the limit', async (method, path) => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const r = await http(agent.url, method, path, deep);
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/JSON nested more than 256 levels deep \(the limit for request bodies\)$/);
    expect(r.text).not.toMatch(/call stack/);
  });

  test('nesting within the limit is parsed as before (a schema error, not a depth error)', async () => {
    const r = await http(agent.url, 'PUT', '/v1/txn', '['.repeat(200) + ']'.repeat(200));
    expect(r.status).toBe(400);
    expect(r.text).not.toMatch(/nested/);
  });
});

describe('the UI security headers', () => {
  test.each(['/ui/', '/ui/app.js', '/ui/style.css', '/ui/no-such-file'])('%s is sent with CSP (frame-ancestors), X-Frame-Options and nosniff', async (path) => {
    const res = await fetch(agent.url + path);
    await res.arrayBuffer();
    expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
