// Alias checks (issue #27; Consul 1.3+'s AliasService/AliasNode) and the default checks Consul gives
// a sidecar_service: a TCP check on the proxy's port and an alias of the service it fronts. Through
// HTTP on an in-process dev agent; check floors lowered so runs take ms.
import { createServer, type Server } from 'node:net';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { freePorts } from '../support/ports';

let a: TestAgent;
const servers: Server[] = [];
beforeAll(async () => {
  a = await startDevAgent((c) => {
    c.checks.intervalMinMs = 20;
  });
});
afterAll(async () => {
  for (const s of servers) s.close();
  await a.stop();
});

const put = (path: string, body?: unknown) => http(a.url, 'PUT', path, body);
const agentCheck = async (id: string) => ((await http(a.url, 'GET', '/v1/agent/checks')).json as Record<string, any>)[id];
const catalogCheck = async (node: string, id: string) => ((await http(a.url, 'GET', `/v1/health/node/${node}`)).json as any[]).find((c) => c.CheckID === id);
const until = (cond: () => Promise<boolean>, ms = 5_000) => waitFor(cond, ms, 20);

test('a local alias check follows the aliased service\'s checks: passing → critical → passing, with Consul\'s outputs', async () => {
  expect((await put('/v1/agent/service/register', { Name: 'api', Port: 1, Check: { CheckID: 'api-ttl', Name: 'api ttl', TTL: '60s', Status: 'passing' } })).status).toBe(200);
  expect((await put('/v1/agent/check/register', { Name: 'api-alias', AliasService: 'api' })).status).toBe(200);
  await until(async () => (await agentCheck('api-alias'))?.Status === 'passing');
  expect((await agentCheck('api-alias')).Output).toBe('All checks passing.');

  await put('/v1/agent/check/fail/api-ttl?note=down');
  await until(async () => (await catalogCheck('test-agent', 'api-alias'))?.Status === 'critical');
  expect((await agentCheck('api-alias')).Output).toBe('Aliased check "api ttl" failing: down');

  await put('/v1/agent/check/warn/api-ttl?note=slow');
  await until(async () => (await agentCheck('api-alias'))?.Status === 'warning');
  await put('/v1/agent/check/pass/api-ttl');
  await until(async () => (await catalogCheck('test-agent', 'api-alias'))?.Status === 'passing');

  // An alias of a service with no checks is passing, as Consul's.
  expect((await put('/v1/agent/check/register', { Name: 'nothing-alias', AliasService: 'no-such-service' })).status).toBe(200);
  await until(async () => (await agentCheck('nothing-alias'))?.Output === 'No checks found.');
  expect((await agentCheck('nothing-alias')).Status).toBe('passing');
});

test('a remote alias check (AliasNode) follows another node\'s checks in the catalog', async () => {
  const reg = (status: string) =>
    put('/v1/catalog/register', { Node: 'ext', Address: '10.0.0.9', Service: { ID: 'svc1', Service: 'svc', Port: 80 }, Check: { CheckID: 'svc-up', Name: 'svc up', ServiceID: 'svc1', Status: status, Output: `is ${status}` } });
  expect((await reg('passing')).status).toBe(200);
  expect((await put('/v1/agent/check/register', { Name: 'ext-alias', AliasNode: 'ext', AliasService: 'svc1' })).status).toBe(200);
  await until(async () => (await agentCheck('ext-alias'))?.Status === 'passing');
  expect((await reg('critical')).status).toBe(200);
  await until(async () => (await catalogCheck('test-agent', 'ext-alias'))?.Status === 'critical');
  expect((await agentCheck('ext-alias')).Output).toBe('Aliased check "svc up" failing: is critical');
  expect((await reg('passing')).status).toBe(200);
  await until(async () => (await catalogCheck('test-agent', 'ext-alias'))?.Status === 'passing');
});

test('alias checks take neither a TTL nor an interval kind, with Consul\'s texts', async () => {
  const r = await put('/v1/agent/check/register', { Name: 'bad', AliasService: 'api', TTL: '10s' });
  expect(r.status).toBe(400);
  expect(r.text).toContain('TTL must be not be set for Alias checks');
});

test('a sidecar_service gets Consul\'s default checks: its port listening, and an alias of the service it fronts', async () => {
  const [proxyPort] = (await freePorts(1)) as [number];
  const body = { Name: 'pay', Port: 1, Check: { CheckID: 'pay-ttl', Name: 'pay ttl', TTL: '60s', Status: 'passing' }, Connect: { SidecarService: { Port: proxyPort } } };
  expect((await put('/v1/agent/service/register', body)).status).toBe(200);
  const tcp = await agentCheck('service:pay-sidecar-proxy:1');
  expect(tcp).toMatchObject({ Name: 'Connect Sidecar Listening', ServiceID: 'pay-sidecar-proxy', Definition: { TCP: `127.0.0.1:${proxyPort}`, Interval: '10s' } });
  expect(await agentCheck('service:pay-sidecar-proxy:2')).toMatchObject({ Name: 'Connect Sidecar Aliasing pay', ServiceID: 'pay-sidecar-proxy' });
  // Nothing listens yet: the sidecar is not passing, so health/connect (passing) offers no endpoint.
  await until(async () => (await agentCheck('service:pay-sidecar-proxy:1'))?.Status === 'critical');
  expect((await http(a.url, 'GET', '/v1/health/connect/pay?passing')).json).toEqual([]);
  // A listener on the port (the proxy) and a healthy service: the sidecar passes.
  const listener = createServer((s) => s.destroy());
  await new Promise<void>((r) => listener.listen(proxyPort, '127.0.0.1', () => r()));
  servers.push(listener);
  await until(async () => (await http(a.url, 'GET', '/v1/health/connect/pay?passing')).json.length === 1, 30_000);
  // The service turns critical: the alias does, and the sidecar leaves the passing endpoints.
  await put('/v1/agent/check/fail/pay-ttl');
  await until(async () => (await agentCheck('service:pay-sidecar-proxy:2'))?.Status === 'critical');
  await until(async () => (await http(a.url, 'GET', '/v1/health/connect/pay?passing')).json.length === 0);
  // Checks given for the sidecar replace the defaults.
  const own = { Name: 'own', Port: 1, Connect: { SidecarService: { Port: proxyPort, Check: { Name: 'mine', TTL: '30s' } } } };
  expect((await put('/v1/agent/service/register', own)).status).toBe(200);
  expect(await agentCheck('service:own-sidecar-proxy')).toMatchObject({ Name: 'mine' });
  expect(await agentCheck('service:own-sidecar-proxy:1')).toBeUndefined();
}, 60_000);
