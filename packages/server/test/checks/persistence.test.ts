// Durable agent state: an in-process agent with a data dir is stopped and started again, and the
// services and checks registered through the API come back (files under <data-dir>/services and
// /checks), a passing TTL check stays passing within its TTL, and config-file definitions load.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, applyConfigFile, buildConfig, createLogger, type AgentConfig } from '@registry/server';
import { http, waitFor } from '../support/dev-agent';
import { freePort } from '../support/processes';

jest.setTimeout(30_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-checks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function start(config: AgentConfig): Promise<{ agent: Agent; url: string }> {
  const agent = await Agent.start(config, { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false) });
  const url = `http://127.0.0.1:${agent.httpPort}`;
  await waitFor(async () => (await (await fetch(`${url}/v1/status/leader`)).json()) !== '', 10_000);
  await waitFor(() => agent.store.catalogNode(config.nodeName).value !== null, 10_000);
  return { agent, url };
}

function configFor(dataDir: string, serverPort: number, file: Record<string, unknown> = {}): AgentConfig {
  const c = applyConfigFile(buildConfig({ dev: true, httpPort: 0, serverPort, node: 'durable', dataDir }), file);
  c.checks.intervalMinMs = 20;
  return c;
}

const checksOf = async (url: string) => (await http(url, 'GET', '/v1/agent/checks')).json as Record<string, any>;

test('services and checks registered through the API survive a restart; a passing TTL check stays passing', async () => {
  const dataDir = join(dir, 'api');
  const serverPort = await freePort();
  let { agent, url } = await start(configFor(dataDir, serverPort));
  try {
    expect((await http(url, 'PUT', '/v1/agent/service/register', { Name: 'api', Port: 8080, Tags: ['v1'], Check: { TTL: '20s' } })).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/check/pass/service:api?note=warm')).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/check/register', { Name: 'disk', TTL: '20s', Notes: 'root fs' })).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/check/register', { Name: 'api-port', ServiceID: 'api', TCP: '127.0.0.1:1', Interval: '1h' })).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/service/register', { Name: 'temp' })).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/service/deregister/temp')).status).toBe(200);
    expect(readdirSync(join(dataDir, 'services'))).toHaveLength(1);
    expect(readdirSync(join(dataDir, 'checks')).filter((f) => f !== 'state')).toHaveLength(2);
  } finally {
    await agent.stop();
  }

  ({ agent, url } = await start(configFor(dataDir, serverPort)));
  try {
    await waitFor(async () => Object.keys(await checksOf(url)).length === 3, 10_000);
    const services = (await http(url, 'GET', '/v1/agent/services')).json;
    expect(Object.keys(services)).toEqual(['api']);
    expect(services.api).toMatchObject({ Service: 'api', Port: 8080, Tags: ['v1'] });
    const checks = await checksOf(url);
    expect(checks['service:api']).toMatchObject({ Status: 'passing', Output: 'warm', ServiceID: 'api' });
    expect(checks.disk).toMatchObject({ Status: 'critical', Notes: 'root fs' });
    expect(checks['api-port']).toMatchObject({ ServiceID: 'api', Definition: { TCP: '127.0.0.1:1', Interval: '1h0m0s' } });
    // The restored TTL check is still an agent check: it can be failed.
    expect((await http(url, 'PUT', '/v1/agent/check/fail/service:api')).status).toBe(200);
    // And deregistering removes the files for good.
    expect((await http(url, 'PUT', '/v1/agent/service/deregister/api')).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/check/deregister/disk')).status).toBe(200);
    expect(readdirSync(join(dataDir, 'services'))).toHaveLength(0);
    expect(readdirSync(join(dataDir, 'checks')).filter((f) => f !== 'state')).toHaveLength(0);
  } finally {
    await agent.stop();
  }
});

test('services and checks from a config file are registered at start, in any key case, and run', async () => {
  const dataDir = join(dir, 'config');
  const file = {
    service: { name: 'front', port: 80, check: { ttl: '10s', status: 'passing' } },
    services: [{ Name: 'back', ID: 'back-1', Checks: [{ TCP: '127.0.0.1:1', Interval: '50ms' }] }],
    checks: [{ name: 'node-ttl', ttl: '10s', notes: 'from config' }],
  };
  const { agent, url } = await start(configFor(dataDir, await freePort(), file));
  try {
    await waitFor(async () => Object.keys(await checksOf(url)).length === 3, 10_000);
    expect(Object.keys((await http(url, 'GET', '/v1/agent/services')).json).sort()).toEqual(['back-1', 'front']);
    const checks = await checksOf(url);
    expect(checks['service:front']).toMatchObject({ Status: 'passing' });
    expect(checks['node-ttl']).toMatchObject({ Notes: 'from config', Status: 'critical' });
    await waitFor(async () => (await checksOf(url))['service:back-1'].Output.includes('ECONNREFUSED'), 5_000);
    // Config definitions are not written to the data dir: the config file is their source.
    expect(existsSync(join(dataDir, 'services')) ? readdirSync(join(dataDir, 'services')) : []).toEqual([]);
  } finally {
    await agent.stop();
  }
});

test('a bad definition in a config file stops the config from loading', () => {
  expect(() => applyConfigFile(buildConfig({ dev: true }), { checks: [{ name: 'x' }] }, 'bad.json')).toThrow(
    'bad.json: checks[0]: Invalid check: TTL must be > 0 for TTL checks',
  );
  expect(() => applyConfigFile(buildConfig({ dev: true }), { service: { port: 1 } }, 'bad.json')).toThrow('bad.json: services[0]: Missing service name');
  expect(() => applyConfigFile(buildConfig({ dev: true }), { services: {} }, 'bad.json')).toThrow('bad.json: services must be an array');
});

test('the check floors are test knobs accepted only with -dev', () => {
  const cfg = applyConfigFile(buildConfig({ dev: true }), { check_interval_min: '10ms', check_deregister_min: '50ms', check_update_interval: '1m' });
  expect(cfg.checks).toEqual({ intervalMinMs: 10, deregisterMinMs: 50, updateIntervalMs: 60_000, enableScriptChecks: false });
  const knobFile = join(dir, 'knob.json');
  writeFileSync(knobFile, JSON.stringify({ check_interval_min: '10ms' }));
  expect(() => buildConfig({ dataDir: dir, configFile: [knobFile] })).toThrow('check_interval_min and check_deregister_min are test knobs');
  expect(buildConfig({ dev: true, configFile: [knobFile] }).checks.intervalMinMs).toBe(10);
});
