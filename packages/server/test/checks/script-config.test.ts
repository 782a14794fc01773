// Script, Docker and gRPC checks from config files and across restarts: a real agent process
// with a config-file script check and neither enable_script_checks nor enable_local_script_checks
// does not start (Consul's words); with enable_local_script_checks the config's script checks run
// while the HTTP API's are refused; checks registered through the API come back after a restart.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, buildConfig, createLogger } from '@registry/server';
import { http, waitFor } from '../support/dev-agent';
import { freePort, spawnAgent } from '../support/processes';

jest.setTimeout(90_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-script-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFile(name: string, content: Record<string, unknown>): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

async function start(flags: Parameters<typeof buildConfig>[0]): Promise<{ agent: Agent; url: string }> {
  const config = buildConfig({ dev: true, httpPort: 0, ...flags });
  const agent = await Agent.start(config, { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false) });
  const url = `http://127.0.0.1:${agent.httpPort}`;
  await waitFor(async () => (await (await fetch(`${url}/v1/status/leader`)).json()) !== '', 20_000);
  return { agent, url };
}

const checksOf = async (url: string) => (await http(url, 'GET', '/v1/agent/checks')).json as Record<string, any>;
const until = (cond: () => Promise<boolean>) => waitFor(cond, 30_000, 50);

test('an agent process whose config file has a script check, without the settings, does not start and says why', async () => {
  const file = configFile('no-scripts', { checks: [{ name: 'disk', args: ['/bin/true'], interval: '10s' }] });
  const log = join(dir, 'no-scripts.log');
  const p = spawnAgent(['-dev', '-config-file', file], await freePort(), await freePort(), log);
  const code = await Promise.race([p.exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 20_000))]);
  if (code === 'running') p.child.kill('SIGKILL');
  expect(code).not.toBe('running');
  expect(code).not.toBe(0);
  expect(readFileSync(log, 'utf8')).toContain("Scripts are disabled on this agent; to enable, configure 'enable_script_checks' or 'enable_local_script_checks' to true");
});

test('an agent process started with -enable-script-checks runs a script check registered through the API', async () => {
  const p = spawnAgent(['-dev', '-enable-script-checks', '-node', 'flagged'], await freePort(), await freePort(), join(dir, 'flag.log'));
  try {
    await waitFor(async () => (await (await fetch(`${p.url}/v1/status/leader`)).json()) !== '', 30_000);
    await waitFor(async () => (await http(p.url, 'PUT', '/v1/agent/check/register', { Name: 'api-script', Args: ['/bin/sh', '-c', 'echo via-api'], Interval: '1s' })).status === 200, 30_000);
    await until(async () => (await checksOf(p.url))['api-script']?.Output === 'via-api\n');
    expect((await checksOf(p.url))['api-script'].Status).toBe('passing');
  } finally {
    p.child.kill('SIGKILL');
    await p.exited;
  }
});

test('enable_local_script_checks: the config\'s script checks (checks and inside services) run, the API\'s are refused', async () => {
  const file = configFile('local', {
    enable_local_script_checks: true,
    check_interval_min: '20ms',
    checks: [{ name: 'from-config', args: ['/bin/sh', '-c', 'echo config-run'], interval: '100ms' }],
    services: [{ name: 'cfg-svc', check: { script_args: ['/bin/sh', '-c', 'echo svc-run; exit 1'], interval: '100ms' } }],
  });
  const { agent, url } = await start({ serverPort: await freePort(), node: 'local-scripts', configFile: [file] });
  try {
    await until(async () => (await checksOf(url))['from-config']?.Output === 'config-run\n');
    expect((await checksOf(url))['from-config'].Status).toBe('passing');
    await until(async () => (await checksOf(url))['service:cfg-svc']?.Status === 'warning');
    const r = await http(url, 'PUT', '/v1/agent/check/register', { Name: 'api', Args: ['/bin/true'], Interval: '10s' });
    expect(r.status).toBe(400);
    expect(r.text).toBe("Scripts are disabled on this agent from remote calls; to enable, configure 'enable_script_checks' to true");
  } finally {
    await agent.stop();
  }
});

test('script, Docker and gRPC checks registered through the API come back after a restart', async () => {
  const dataDir = join(dir, 'data');
  const serverPort = await freePort();
  const file = configFile('persist', { enable_script_checks: true, check_interval_min: '20ms' });
  const flags = { serverPort, node: 'durable-scripts', configFile: [file], dataDir };
  let { agent, url } = await start(flags);
  try {
    await waitFor(() => agent.store.catalogNode('durable-scripts').value !== null, 20_000);
    expect((await http(url, 'PUT', '/v1/agent/check/register', { Name: 'script', ScriptArgs: ['/bin/sh', '-c', 'echo alive'], Interval: '100ms' })).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/check/register', { Name: 'boxed', DockerContainerID: 'no-such-box', Args: ['/bin/true'], Interval: '1h' })).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/service/register', { Name: 'rpc', Check: { GRPC: '127.0.0.1:1/svc', GRPCUseTLS: true, Interval: '100ms', Timeout: '1s' } })).status).toBe(200);
    await until(async () => (await checksOf(url)).script?.Output === 'alive\n');
  } finally {
    await agent.stop();
  }
  ({ agent, url } = await start(flags));
  try {
    await until(async () => Object.keys(await checksOf(url)).sort().join(',') === 'boxed,script,service:rpc');
    await until(async () => (await checksOf(url)).script?.Output === 'alive\n');
    await until(async () => /^rpc error: code = /.test((await checksOf(url))['service:rpc']?.Output ?? ''));
    expect((await checksOf(url))['service:rpc']).toMatchObject({ Status: 'critical', ServiceName: 'rpc' });
  } finally {
    await agent.stop();
  }
});
