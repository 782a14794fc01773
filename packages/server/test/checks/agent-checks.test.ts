// The agent's checks through HTTP on an in-process dev agent: every endpoint and its errors, TTL
// expiry (and the session it invalidates), HTTP and TCP runners against local servers, and
// DeregisterCriticalServiceAfter. Floors are lowered with the -dev test knobs so runs take ms.
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
let web: Server;
let webUrl: string;
/** What the test HTTP server answers on /health. */
let answer = { code: 200, body: 'all good' };

beforeAll(async () => {
  a = await startDevAgent((c) => {
    c.checks.intervalMinMs = 20;
    c.checks.deregisterMinMs = 50;
  });
  web = createHttpServer((req, res) => {
    res.writeHead(answer.code, { 'Content-Type': 'text/plain', 'X-Seen-Header': String(req.headers['x-probe'] ?? '') });
    res.end(answer.body + (req.headers['x-probe'] ? ` probe=${req.headers['x-probe']}` : '') + ` method=${req.method}`);
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await a.stop();
  await new Promise((r) => web.close(r));
});

const put = (path: string, body?: unknown) => http(a.url, 'PUT', path, body);
const agentChecks = async () => (await http(a.url, 'GET', '/v1/agent/checks')).json as Record<string, any>;
const catalogCheck = async (id: string) => ((await http(a.url, 'GET', '/v1/health/node/test-agent')).json as any[]).find((c) => c.CheckID === id);
const until = (cond: () => Promise<boolean>, ms = 5_000) => waitFor(cond, ms, 20);

describe('PUT /v1/agent/check/register', () => {
  test('ID defaults to Name and Status to critical; the check is in the catalog and in /v1/agent/checks', async () => {
    const r = await put('/v1/agent/check/register', { Name: 'mem', TTL: '30s', Notes: 'memory watch' });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    const c = (await agentChecks()).mem;
    expect(c).toMatchObject({ Node: 'test-agent', CheckID: 'mem', Name: 'mem', Status: 'critical', Notes: 'memory watch', Output: '', ServiceID: '', ServiceName: '', ServiceTags: [] });
    expect(c.ModifyIndex).toBeGreaterThan(0);
    expect(await catalogCheck('mem')).toMatchObject({ Status: 'critical', Notes: 'memory watch' });
  });

  test('snake_case keys, an explicit ID and Status, and an HTTP definition shown in Definition', async () => {
    const r = await put('/v1/agent/check/register', {
      id: 'api-http',
      name: 'api',
      status: 'passing',
      http: `${webUrl}/health`,
      method: 'post',
      header: { 'X-Probe': ['one'] },
      interval: '10m',
      timeout: '2s',
    });
    expect(r.status).toBe(200);
    const c = await catalogCheck('api-http');
    expect(c.Definition).toEqual({ HTTP: `${webUrl}/health`, Method: 'POST', Header: { 'X-Probe': ['one'] }, Interval: '10m0s', Timeout: '2s' });
    expect((await agentChecks())['api-http'].Definition).toEqual(c.Definition);
    expect((await put('/v1/agent/check/deregister/api-http')).status).toBe(200);
  });

  test.each([
    [{ TTL: '10s' }, 'Missing check name'],
    [{ Name: 'x', TTL: '10s', Status: 'fine' }, 'Bad check status'],
    [{ Name: 'x' }, 'Invalid check: TTL must be > 0 for TTL checks'],
    [{ Name: 'x', HTTP: 'http://127.0.0.1:1/' }, 'Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks'],
    [{ Name: 'x', TCP: '127.0.0.1:1', Interval: '10s', TTL: '10s' }, 'Invalid check: Interval and TTL cannot both be specified'],
    [{ Name: 'x', ScriptArgs: ['true'] }, 'Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks'],
    [{ Name: 'x', ScriptArgs: ['true'], Interval: '10s' }, "Scripts are disabled on this agent from remote calls; to enable, configure 'enable_script_checks' to true"],
    [{ Name: 'x', TTL: 'soon' }, 'Request decode failed: TTL: time: invalid duration'],
    [{ Name: 'x', TTL: '10s', ServiceID: 'nope' }, 'ServiceID "nope" does not exist'],
    ['{', 'Request decode failed'],
  ])('%j is 400: %s', async (body, message) => {
    const r = await put('/v1/agent/check/register', body);
    expect(r.status).toBe(400);
    expect(r.text).toContain(message);
  });

  test('a check on an agent service carries its name and tags; deregistering the service removes it', async () => {
    expect((await put('/v1/agent/service/register', { Name: 'billing', Tags: ['v2'], Port: 7000 })).status).toBe(200);
    expect((await put('/v1/agent/check/register', { Name: 'billing ttl', ServiceID: 'billing', TTL: '30s' })).status).toBe(200);
    expect((await agentChecks())['billing ttl']).toMatchObject({ ServiceID: 'billing', ServiceName: 'billing', ServiceTags: ['v2'] });
    expect((await http(a.url, 'GET', '/v1/health/checks/billing')).json.map((c: any) => c.CheckID)).toEqual(['billing ttl']);
    expect((await put('/v1/agent/service/deregister/billing')).status).toBe(200);
    expect((await agentChecks())['billing ttl']).toBeUndefined();
    expect(await catalogCheck('billing ttl')).toBeUndefined();
  });
});

describe('TTL checks: pass, warn, fail, update', () => {
  test('pass/warn/fail set the status with ?note as Output; pass after fail is passing again', async () => {
    await put('/v1/agent/check/register', { Name: 'worker', TTL: '30s' });
    for (const [verb, status] of [['pass', 'passing'], ['warn', 'warning'], ['fail', 'critical'], ['pass', 'passing']]) {
      const r = await put(`/v1/agent/check/${verb}/worker?note=${verb}ed`);
      expect(r.status).toBe(200);
      expect(r.text).toBe('');
      expect((await agentChecks()).worker).toMatchObject({ Status: status, Output: `${verb}ed` });
      expect(await catalogCheck('worker')).toMatchObject({ Status: status, Output: `${verb}ed` });
    }
  });

  test('update sets Status and Output; output is capped at 4096 bytes with the captured suffix', async () => {
    await put('/v1/agent/check/register', { Name: 'upd', TTL: '30s' });
    expect((await put('/v1/agent/check/update/upd', { Status: 'warning', Output: 'disk 91%' })).status).toBe(200);
    expect(await catalogCheck('upd')).toMatchObject({ Status: 'warning', Output: 'disk 91%' });
    const long = 'x'.repeat(5000);
    expect((await put('/v1/agent/check/update/upd', { status: 'passing', output: long })).status).toBe(200);
    expect((await catalogCheck('upd')).Output).toBe(`${'x'.repeat(4096)} ... (captured 4096 of 5000 bytes)`);
  });

  test.each([
    ['PUT', '/v1/agent/check/update/upd', { Status: 'fine' }, "Invalid check status: 'fine'"],
    ['PUT', '/v1/agent/check/update/upd', {}, "Invalid check status: ''"],
    ['PUT', '/v1/agent/check/pass/nope', undefined, 'CheckID "nope" does not have associated TTL'],
    ['PUT', '/v1/agent/check/fail/', undefined, 'Missing check ID'],
  ])('%s %s → 400 %s', async (method, path, body, message) => {
    const r = await http(a.url, method, path, body);
    expect(r.status).toBe(400);
    expect(r.text).toBe(message);
  });

  test('a non-TTL check cannot be passed', async () => {
    await put('/v1/agent/check/register', { Name: 'tcp-only', TCP: '127.0.0.1:1', Interval: '10m' });
    const r = await put('/v1/agent/check/pass/tcp-only');
    expect(r.status).toBe(400);
    expect(r.text).toBe('CheckID "tcp-only" does not have associated TTL');
    await put('/v1/agent/check/deregister/tcp-only');
  });

  test('repeating the same pass makes no catalog write', async () => {
    await put('/v1/agent/check/register', { Name: 'steady', TTL: '30s' });
    await put('/v1/agent/check/pass/steady?note=ok');
    const index = (await catalogCheck('steady')).ModifyIndex;
    const writes = a.agent.local!.resultWrites;
    for (let i = 0; i < 5; i++) expect((await put('/v1/agent/check/pass/steady?note=ok')).status).toBe(200);
    expect(a.agent.local!.resultWrites).toBe(writes);
    expect((await catalogCheck('steady')).ModifyIndex).toBe(index);
  });

  test('a TTL not refreshed in time turns critical ("TTL expired") and invalidates the session linked to it', async () => {
    await put('/v1/agent/check/register', { Name: 'lease', TTL: '1s' });
    await put('/v1/agent/check/pass/lease');
    const created = await put('/v1/session/create', { Checks: ['serfHealth', 'lease'] });
    expect(created.status).toBe(200);
    const id = created.json.ID;
    expect((await http(a.url, 'GET', `/v1/session/info/${id}`)).json).toHaveLength(1);
    await until(async () => (await catalogCheck('lease')).Status === 'critical');
    expect(await catalogCheck('lease')).toMatchObject({ Status: 'critical', Output: 'TTL expired' });
    expect((await agentChecks()).lease).toMatchObject({ Status: 'critical', Output: 'TTL expired' });
    expect((await http(a.url, 'GET', `/v1/session/info/${id}`)).json).toBeNull();
    // Passing again revives the check.
    await put('/v1/agent/check/pass/lease?note=back');
    expect(await catalogCheck('lease')).toMatchObject({ Status: 'passing', Output: 'back' });
  });
});

describe('PUT /v1/agent/check/deregister/:id', () => {
  test('removes the check from the agent and the catalog; an unknown ID is fine with ACLs off', async () => {
    await put('/v1/agent/check/register', { Name: 'gone', TTL: '30s' });
    expect((await put('/v1/agent/check/deregister/gone')).status).toBe(200);
    expect((await agentChecks()).gone).toBeUndefined();
    expect(await catalogCheck('gone')).toBeUndefined();
    expect((await put('/v1/agent/check/deregister/never-was')).status).toBe(200);
  });
});

describe('HTTP and TCP runners', () => {
  test('HTTP: 200 passing, 429 warning, 500 critical, with status line, body and the configured method and header', async () => {
    answer = { code: 200, body: 'all good' };
    const r = await put('/v1/agent/check/register', { Name: 'web-http', HTTP: `${webUrl}/health`, Interval: '50ms', Method: 'PUT', Header: { 'X-Probe': ['abc'] } });
    expect(r.status).toBe(200);
    await until(async () => (await catalogCheck('web-http')).Status === 'passing');
    expect((await catalogCheck('web-http')).Output).toBe(`HTTP PUT ${webUrl}/health: 200 OK Output: all good probe=abc method=PUT`);
    answer = { code: 429, body: 'slow down' };
    await until(async () => (await catalogCheck('web-http')).Status === 'warning');
    expect((await catalogCheck('web-http')).Output).toContain('429 Too Many Requests Output: slow down');
    answer = { code: 500, body: 'broken' };
    await until(async () => (await catalogCheck('web-http')).Status === 'critical');
    expect((await catalogCheck('web-http')).Output).toContain('500 Internal Server Error Output: broken');
    await put('/v1/agent/check/deregister/web-http');
  });

  test('HTTP: an unreachable URL is critical with the error', async () => {
    await put('/v1/agent/check/register', { Name: 'dead-http', HTTP: 'http://127.0.0.1:1/', Interval: '50ms', Status: 'passing' });
    await until(async () => (await catalogCheck('dead-http')).Status === 'critical');
    expect((await catalogCheck('dead-http')).Output).toMatch(/^HTTP GET http:\/\/127\.0\.0\.1:1\/: .*ECONNREFUSED/);
    await put('/v1/agent/check/deregister/dead-http');
  });

  test('HTTP: a server slower than Timeout is critical', async () => {
    const slow = createHttpServer(() => undefined); // never answers
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`;
      await put('/v1/agent/check/register', { Name: 'slow-http', HTTP: url, Interval: '50ms', Timeout: '100ms', Status: 'passing' });
      await until(async () => (await catalogCheck('slow-http')).Status === 'critical');
      expect((await catalogCheck('slow-http')).Output).toContain('timed out after 100 ms');
      await put('/v1/agent/check/deregister/slow-http');
    } finally {
      slow.closeAllConnections();
      await new Promise((r) => slow.close(r));
    }
  });

  test('TCP: a listening port is passing; once closed it is critical', async () => {
    const tcp: TcpServer = createTcpServer((s) => s.destroy());
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    const address = `127.0.0.1:${(tcp.address() as AddressInfo).port}`;
    await put('/v1/agent/check/register', { Name: 'db-tcp', TCP: address, Interval: '50ms' });
    await until(async () => (await catalogCheck('db-tcp')).Status === 'passing');
    expect((await catalogCheck('db-tcp')).Output).toBe(`TCP connect ${address}: Success`);
    await new Promise((r) => tcp.close(r));
    // A check that connected while the listener was closing sees its connection reset (ECONNRESET,
    // critical too); the runs after it find nothing listening.
    await until(async () => {
      const check = await catalogCheck('db-tcp');
      return check.Status === 'critical' && check.Output.includes('ECONNREFUSED');
    });
    expect((await catalogCheck('db-tcp')).Output).toContain('ECONNREFUSED');
    await put('/v1/agent/check/deregister/db-tcp');
  });

  test('a steady interval check makes no catalog writes after its first result', async () => {
    answer = { code: 200, body: 'steady' };
    await put('/v1/agent/check/register', { Name: 'steady-http', HTTP: `${webUrl}/`, Interval: '20ms' });
    await until(async () => (await catalogCheck('steady-http')).Status === 'passing');
    const index = (await catalogCheck('steady-http')).ModifyIndex;
    await new Promise((r) => setTimeout(r, 300)); // ~15 more runs
    expect((await catalogCheck('steady-http')).ModifyIndex).toBe(index);
    await put('/v1/agent/check/deregister/steady-http');
  });
});

describe('checks in a service definition', () => {
  test('a service TTL check is run by the agent: pass works and it expires', async () => {
    expect((await put('/v1/agent/service/register', { Name: 'queue', Check: { TTL: '1s' } })).status).toBe(200);
    expect((await put('/v1/agent/check/pass/service:queue?note=up')).status).toBe(200);
    expect((await http(a.url, 'GET', '/v1/health/checks/queue')).json[0]).toMatchObject({ CheckID: 'service:queue', Status: 'passing', Output: 'up' });
    await until(async () => (await http(a.url, 'GET', '/v1/health/checks/queue')).json[0].Status === 'critical');
    expect((await agentChecks())['service:queue']).toMatchObject({ ServiceName: 'queue', Output: 'TTL expired' });
    await put('/v1/agent/service/deregister/queue');
    expect((await agentChecks())['service:queue']).toBeUndefined();
  });

  test('an invalid service check is refused with the check error', async () => {
    const r = await put('/v1/agent/service/register', { Name: 'bad', Check: { HTTP: 'http://127.0.0.1:1/' } });
    expect(r.status).toBe(400);
    expect(r.text).toBe('Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks');
  });

  test('DeregisterCriticalServiceAfter removes the service once its check has been critical that long', async () => {
    const r = await put('/v1/agent/service/register', { Name: 'flaky', Port: 1, Check: { TCP: '127.0.0.1:1', Interval: '30ms', DeregisterCriticalServiceAfter: '150ms' } });
    expect(r.status).toBe(200);
    expect((await http(a.url, 'GET', '/v1/agent/services')).json.flaky).toBeDefined();
    await until(async () => (await http(a.url, 'GET', '/v1/agent/services')).json.flaky === undefined);
    expect((await http(a.url, 'GET', '/v1/catalog/service/flaky')).json).toEqual([]);
    expect((await agentChecks())['service:flaky']).toBeUndefined();
  });

  test('a passing service is not deregistered', async () => {
    const tcp = createTcpServer((s) => s.destroy());
    await new Promise<void>((res) => tcp.listen(0, '127.0.0.1', res));
    try {
      const address = `127.0.0.1:${(tcp.address() as AddressInfo).port}`;
      await put('/v1/agent/service/register', { Name: 'solid', Check: { TCP: address, Interval: '30ms', DeregisterCriticalServiceAfter: '100ms' } });
      await until(async () => (await http(a.url, 'GET', '/v1/health/checks/solid')).json[0]?.Status === 'passing');
      await new Promise((res) => setTimeout(res, 300));
      expect((await http(a.url, 'GET', '/v1/agent/services')).json.solid).toBeDefined();
      await put('/v1/agent/service/deregister/solid');
    } finally {
      await new Promise((res) => tcp.close(res));
    }
  });
});
