// Reloading a running agent (issue 11, Lifecycle): SIGHUP and PUT /v1/agent/reload re-read the
// config files; the log level and config-file services change at once; an invalid config keeps
// the running one and says why; the endpoint needs agent:write.
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/wait';
import { startAgentProc, whenReady, type AgentProc } from './agent-process';

jest.setTimeout(90_000);

const ROOT = 'c0ffee00-0000-4000-8000-00000000e11d';
const auth = { 'X-Registry-Token': ROOT };

let dir: string;
let conf: string;
let agent: AgentProc;

const put = (name: string, content: unknown) => writeFileSync(join(conf, name), typeof content === 'string' ? content : JSON.stringify(content));

async function services(): Promise<string[]> {
  const r = await fetch(`${agent.url}/v1/agent/services`, { headers: auth });
  return Object.keys((await r.json()) as Record<string, unknown>).sort();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-reload-'));
  conf = join(dir, 'conf.d');
  mkdirSync(conf);
  put('00-base.json', { log_level: 'info', acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: ROOT } } });
  agent = await startAgentProc(['-dev', '-node', 'reloader', '-config-dir', conf], join(dir, 'agent.log'));
  await whenReady(agent, 'reloader', ROOT);
});

afterAll(async () => {
  await agent?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('SIGHUP raises the log level and adds a service from a new config file, without a restart', async () => {
  await fetch(`${agent.url}/v1/agent/services`, { headers: auth });
  expect(agent.log()).not.toMatch(/\[DEBUG\]/);
  put('00-base.json', { log_level: 'debug', acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: ROOT } } });
  put('10-web.hcl', 'service {\n  name = "web"\n  port = 8080\n}\n');
  const pid = agent.child.pid;
  agent.child.kill('SIGHUP');
  expect(await eventually(async () => (await services()).includes('web'), 15_000)).toBe(true);
  expect(await eventually(() => /\[DEBUG\]\s+agent\.http: Request GET \/v1\/agent\/services/.test(agent.log()), 10_000)).toBe(true);
  expect(agent.log()).toMatch(/configuration reloaded: changed=log_level: info → debug, services: \+web/);
  expect(agent.child.pid).toBe(pid);
  expect(agent.child.exitCode).toBeNull();
});

test('a SIGHUP with an invalid config keeps the running one and logs why', async () => {
  put('20-bad.json', { acl: { enabled: 'yes' } });
  agent.child.kill('SIGHUP');
  expect(await eventually(() => /reload failed: the new configuration is invalid, keeping the running one/.test(agent.log()), 10_000)).toBe(true);
  expect(agent.log()).toContain(`${join(conf, '20-bad.json')}: acl.enabled must be boolean`);
  expect(agent.child.exitCode).toBeNull();
  expect(await services()).toEqual(['web']);
  // ACLs are still on: the anonymous token sees nothing.
  expect(await (await fetch(`${agent.url}/v1/agent/services`)).json()).toEqual({});
});

test('PUT /v1/agent/reload: 403 without agent:write, 400 naming the errors, then applies a valid config', async () => {
  expect((await fetch(`${agent.url}/v1/agent/reload`, { method: 'PUT' })).status).toBe(403);
  const bad = await fetch(`${agent.url}/v1/agent/reload`, { method: 'PUT', headers: auth });
  expect(bad.status).toBe(400);
  expect(await bad.text()).toContain('20-bad.json: acl.enabled must be boolean');
  expect(await services()).toEqual(['web']);

  unlinkSync(join(conf, '20-bad.json'));
  unlinkSync(join(conf, '10-web.hcl'));
  put('11-api.json', { services: [{ name: 'api', port: 9090, check: { ttl: '30s' } }] });
  put('00-base.json', { log_level: 'warn', acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: ROOT } } });
  const ok = await fetch(`${agent.url}/v1/agent/reload`, { method: 'PUT', headers: auth });
  expect(ok.status).toBe(200);
  expect(await services()).toEqual(['api']);
  const checks = (await (await fetch(`${agent.url}/v1/agent/checks`, { headers: auth })).json()) as Record<string, { ServiceName: string }>;
  expect(Object.values(checks).map((c) => c.ServiceName)).toEqual(['api']);

  // warn: no more debug or info lines.
  const before = agent.log().length;
  await fetch(`${agent.url}/v1/agent/services`, { headers: auth });
  await new Promise((r) => setTimeout(r, 300));
  expect(agent.log().slice(before)).not.toMatch(/\[(DEBUG|INFO)\]/);
});
