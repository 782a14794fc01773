// Lookups keyed by a request never reach Object.prototype (issue 33 finding 8): every
// `Object.prototype` name (`constructor`, `toString`, `__proto__`, …) sent as every path parameter
// of every route, with the management token and without one, against a real agent with ACLs on.
// `GET /v1/agent/health/service/id/constructor` answered 500 "Cannot read properties of undefined"
// when the local services were a plain object. No answer may be a 500 and the process must live.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { routeList } from '../../src/http/routes';
import { http, waitFor } from '../support/dev-agent';
import { freePorts } from '../support/ports';
import { spawnAgent, type AgentProcess } from '../support/processes';

jest.setTimeout(180_000);

const MASTER = 'c0ffee00-0000-4000-8000-00000000beef';
const NAMES = Object.getOwnPropertyNames(Object.prototype);
/** Routes whose effect is on the agent itself, not a lookup: they would stop or rejoin the process under test. */
const SKIP = new Set(['PUT /v1/agent/leave', 'PUT /v1/agent/reload']);

const dir = mkdtempSync(join(tmpdir(), 'registry-proto-'));
let agent: AgentProcess;

beforeAll(async () => {
  const [httpPort, serverPort] = await freePorts(2);
  const config = join(dir, 'acl.json');
  writeFileSync(config, JSON.stringify({ acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: MASTER } } }));
  agent = spawnAgent(['-dev', '-node', 'proto-agent', '-config-file', config], httpPort, serverPort, join(dir, 'agent.log'));
  await waitFor(async () => (await (await fetch(`${agent.url}/v1/status/leader`)).json()) !== '', 20_000, 100);
  await waitFor(async () => (await http(agent.url, 'GET', '/v1/acl/token/self', undefined, { 'X-Registry-Token': MASTER })).status === 200, 20_000, 100);
  // Something to look up beside the prototype names: a local service with a check.
  const reg = await http(agent.url, 'PUT', '/v1/agent/service/register', { Name: 'web', ID: 'web-1', Port: 80, Check: { TTL: '30s' } }, { 'X-Registry-Token': MASTER });
  expect(reg.status).toBe(200);
});

afterAll(async () => {
  if (agent && agent.child.exitCode === null) {
    agent.child.kill('SIGKILL');
    await agent.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Every URL of a route with `name` as each of its path parameters in turn (the others a plain word). */
function urls(path: string, name: string): string[] {
  const params = [...path.matchAll(/:(\w+)|\*(\w+)/g)].map((m) => m[1] ?? m[2]);
  return params.map((target) =>
    path
      .replace(/\{\/:(\w+)\}|\{\/\*(\w+)\}/g, (_m, p: string | undefined, w: string | undefined) => `/${encodeURIComponent((p ?? w) === target ? name : 'plain')}`)
      .replace(/:(\w+)/g, (_m, p: string) => encodeURIComponent(p === target ? name : 'plain')),
  );
}

test('the route table has path parameters to try (the walk would notice none)', () => {
  const withParams = routeList().filter((r) => /[:*]/.test(r.path));
  expect(withParams.length).toBeGreaterThan(40);
  expect(urls('/v1/agent/health/service/id{/:id}', 'constructor')).toEqual(['/v1/agent/health/service/id/constructor']);
  expect(urls('/v1/query/:id/execute', 'toString')).toEqual(['/v1/query/toString/execute']);
  expect(NAMES).toEqual(expect.arrayContaining(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']));
});

test('no route answers 500 for an Object.prototype name as any path parameter, and the agent lives', async () => {
  const failures: string[] = [];
  let sent = 0;
  for (const r of routeList().filter((x) => /[:*]/.test(x.path) && !SKIP.has(`${x.method} ${x.path}`))) {
    for (const name of NAMES) {
      for (const url of urls(r.path, name)) {
        for (const token of [MASTER, undefined]) {
          const body = r.method === 'PUT' || r.method === 'POST' ? '{}' : undefined;
          const res = await http(agent.url, r.method, url, body, token ? { 'X-Registry-Token': token } : {});
          sent++;
          if (res.status >= 500) failures.push(`${r.method} ${url} ${token ? '(management)' : '(anonymous)'} → ${res.status} ${res.text.slice(0, 120)}`);
        }
      }
    }
  }
  expect(sent).toBeGreaterThan(1_000);
  expect(failures).toEqual([]);
  expect(agent.child.exitCode).toBeNull();
  const after = await http(agent.url, 'GET', '/v1/agent/health/service/id/web-1', undefined, { 'X-Registry-Token': MASTER });
  expect(after.status).toBe(503); // its TTL check is critical until passed: the lookup still finds it
});

test('services and meta keys named after Object.prototype members are kept, listed and looked up like any other', async () => {
  const as = { 'X-Registry-Token': MASTER };
  const names = ['constructor', 'toString', '__proto__'];
  for (const name of names) {
    const r = await http(agent.url, 'PUT', '/v1/agent/service/register', JSON.stringify({ Name: name, ID: name, Port: 1, Meta: { [name]: 'v' } }), as);
    expect([name, r.status, r.text]).toEqual([name, 200, '']);
  }
  const listed = await http(agent.url, 'GET', '/v1/agent/services', undefined, as);
  expect(Object.keys(listed.json)).toEqual(expect.arrayContaining(names));
  for (const name of names) {
    const one = await http(agent.url, 'GET', `/v1/agent/service/${name}`, undefined, as);
    expect([name, one.status, one.json?.Service, Object.keys(one.json?.Meta ?? {})]).toEqual([name, 200, name, [name]]);
    const health = await http(agent.url, 'GET', `/v1/agent/health/service/id/${name}`, undefined, as);
    expect([name, health.status, health.json?.Service?.ID]).toEqual([name, 200, name]);
  }
  await waitFor(async () => {
    const catalog = await http(agent.url, 'GET', '/v1/catalog/services', undefined, as);
    return names.every((n) => Object.keys(catalog.json).includes(n));
  }, 10_000);
  const node = await http(agent.url, 'GET', '/v1/catalog/node/proto-agent', undefined, as);
  expect(Object.keys(node.json.Services)).toEqual(expect.arrayContaining(names));
});
