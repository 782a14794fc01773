// Script and Docker checks on an in-process dev agent with enable_script_checks: exit codes as
// Consul maps them, the output (stdout and stderr, the last 4 KiB), a timeout that kills the
// command and what it started, commands that cannot start, and `docker exec` through a fake
// `docker` on PATH that records what it was asked. A second agent without the setting refuses them
// with Consul's words.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-script-checks-'));
const savedPath = process.env.PATH;
let a: TestAgent;
let closed: TestAgent;

// A fake `docker`: records its arguments, then acts as the container named in them asks.
const FAKE_DOCKER = `#!/bin/sh
echo "$*" >> "${dir}/docker-argv"
case "$3" in
  ok-box) echo "healthy from $4"; exit 0 ;;
  warn-box) echo "degraded"; exit 1 ;;
  bad-box) echo "broken" >&2; exit 2 ;;
  *) echo "Error response from daemon: No such container: $3" >&2; exit 1 ;;
esac
`;

beforeAll(async () => {
  writeFileSync(join(dir, 'docker'), FAKE_DOCKER, { mode: 0o755 });
  writeFileSync(join(dir, 'not-executable.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
  chmodSync(join(dir, 'not-executable.sh'), 0o644);
  process.env.PATH = `${dir}:${savedPath}`;
  a = await startDevAgent((c) => {
    c.checks.intervalMinMs = 20;
    c.checks.enableScriptChecks = true;
  });
  closed = await startDevAgent((c) => {
    c.checks.intervalMinMs = 20;
  });
});
afterAll(async () => {
  await a?.stop();
  await closed?.stop();
  process.env.PATH = savedPath;
  rmSync(dir, { recursive: true, force: true });
});

const put = (path: string, body?: unknown) => http(a.url, 'PUT', path, body);
const agentChecks = async () => (await http(a.url, 'GET', '/v1/agent/checks')).json as Record<string, any>;
const until = (cond: () => Promise<boolean>, ms = 20_000) => waitFor(cond, ms, 20);
const settled = async (id: string, status: string) => {
  // A check starts critical with no output: wait for a run.
  await until(async () => {
    const c = (await agentChecks())[id];
    return c?.Status === status && c.Output !== '';
  });
  return (await agentChecks())[id];
};

describe('script checks', () => {
  test.each([
    ['zero', 0, 'passing'],
    ['one', 1, 'warning'],
    ['two', 2, 'critical'],
    ['forty-two', 42, 'critical'],
  ])('exit %s is %s... as Consul maps it; stdout and stderr are the output', async (name, code, status) => {
    const r = await put('/v1/agent/check/register', {
      Name: `exit-${name}`,
      ScriptArgs: ['/bin/sh', '-c', `echo out-${code}; echo err-${code} >&2; exit ${code}`],
      Interval: '50ms',
    });
    expect(r.status).toBe(200);
    const c = await settled(`exit-${name}`, status);
    expect(c.Output).toContain(`out-${code}\n`);
    expect(c.Output).toContain(`err-${code}\n`);
    // Consul 1.4's AgentCheck has no Type, and its Definition no script fields.
    expect(c.Type).toBeUndefined();
    expect(c.Definition).toEqual({ Interval: '50ms' });
  });

  test('`args` (any case) is taken as ScriptArgs; the command runs without a shell', async () => {
    expect((await put('/v1/agent/check/register', { name: 'literal', args: ['/bin/echo', '$HOME', '*', ';', 'true'], interval: '50ms' })).status).toBe(200);
    const c = await settled('literal', 'passing');
    expect(c.Output).toBe('$HOME * ; true\n');
  });

  test('a huge output is cut to its last 4 KiB with Consul\'s note of how much there was', async () => {
    const script = 'i=0; while [ $i -lt 2000 ]; do echo "line-$i-0123456789"; i=$((i+1)); done';
    expect((await put('/v1/agent/check/register', { Name: 'chatty', ScriptArgs: ['/bin/sh', '-c', script], Interval: '200ms' })).status).toBe(200);
    const c = await settled('chatty', 'passing');
    const total = Array.from({ length: 2000 }, (_, i) => `line-${i}-0123456789\n`).join('').length;
    expect(c.Output.startsWith(`Captured 4096 of ${total} bytes\n...\n`)).toBe(true);
    expect(c.Output.endsWith('line-1999-0123456789\n')).toBe(true);
    expect(c.Output.length).toBe(`Captured 4096 of ${total} bytes\n...\n`.length + 4096);
  });

  test('a command that forks and hangs is killed at its Timeout, children too, and is critical', async () => {
    const pids = join(dir, 'pids');
    const script = `sleep 300 & echo $! > ${pids}; echo started; sleep 300`;
    const started = Date.now();
    expect((await put('/v1/agent/check/register', { Name: 'hangs', ScriptArgs: ['/bin/sh', '-c', script], Interval: '1s', Timeout: '300ms' })).status).toBe(200);
    const c = await settled('hangs', 'critical');
    expect(c.Output).toBe('Timed out (300ms) running check\n\nstarted\n');
    expect(Date.now() - started).toBeLessThan(8_000);
    const child = Number(readFileSync(pids, 'utf8').trim());
    await until(async () => {
      try {
        process.kill(child, 0);
        return false;
      } catch {
        return true; // gone
      }
    }, 5_000);
  });

  test('a command that cannot start is critical with the reason, and the agent goes on', async () => {
    expect((await put('/v1/agent/check/register', { Name: 'missing', ScriptArgs: ['no-such-command-here'], Interval: '50ms' })).status).toBe(200);
    expect((await put('/v1/agent/check/register', { Name: 'missing-path', ScriptArgs: [join(dir, 'nope')], Interval: '50ms' })).status).toBe(200);
    expect((await put('/v1/agent/check/register', { Name: 'no-exec-bit', ScriptArgs: [join(dir, 'not-executable.sh')], Interval: '50ms' })).status).toBe(200);
    expect((await settled('missing', 'critical')).Output).toBe('exec: "no-such-command-here": executable file not found in $PATH');
    await until(async () => (await agentChecks())['missing-path']?.Output !== '');
    expect((await agentChecks())['missing-path']).toMatchObject({ Status: 'critical', Output: `fork/exec ${join(dir, 'nope')}: no such file or directory` });
    await until(async () => (await agentChecks())['no-exec-bit']?.Output !== '');
    expect((await agentChecks())['no-exec-bit']).toMatchObject({ Status: 'critical', Output: `fork/exec ${join(dir, 'not-executable.sh')}: permission denied` });
    expect((await http(a.url, 'GET', '/v1/agent/self')).status).toBe(200);
  });

  test('inside a service definition (Check and Checks), and in the catalog under the service', async () => {
    const r = await put('/v1/agent/service/register', {
      Name: 'scripted',
      Check: { ScriptArgs: ['/bin/sh', '-c', 'echo main'], Interval: '50ms' },
      Checks: [{ Name: 'second', Args: ['/bin/sh', '-c', 'echo slow; exit 1'], Interval: '50ms' }],
    });
    expect(r.status).toBe(200);
    expect((await settled('service:scripted:1', 'passing')).Output).toBe('main\n');
    expect((await settled('service:scripted:2', 'warning')).ServiceName).toBe('scripted');
    await until(async () => {
      const rows = (await http(a.url, 'GET', '/v1/health/checks/scripted')).json as any[];
      return rows.map((c) => `${c.CheckID}=${c.Status}`).sort().join(',') === 'service:scripted:1=passing,service:scripted:2=warning';
    });
  });

  test('deregistering a running check ends its command', async () => {
    const pids = join(dir, 'dereg-pid');
    const script = `echo $$ > ${pids}; sleep 300`;
    expect((await put('/v1/agent/check/register', { Name: 'long', ScriptArgs: ['/bin/sh', '-c', script], Interval: '50ms', Timeout: '10m' })).status).toBe(200);
    await until(async () => existsSync(pids) && readFileSync(pids, 'utf8').trim() !== '');
    const pid = Number(readFileSync(pids, 'utf8').trim());
    expect((await put('/v1/agent/check/deregister/long')).status).toBe(200);
    await until(async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 5_000);
  });
});

describe('docker checks', () => {
  test.each([
    ['ok-box', 'passing', 'healthy from /bin/check\n'],
    ['warn-box', 'warning', 'degraded\n'],
    ['bad-box', 'critical', 'broken\n'],
    ['gone-box', 'critical', 'Error response from daemon: No such container: gone-box\n'],
  ])('container %s: docker exec runs Args in it; %s', async (container, status, output) => {
    const r = await put('/v1/agent/check/register', { Name: `docker-${container}`, DockerContainerID: container, Shell: '/bin/bash', Args: ['/bin/check', '--quick'], Interval: '50ms' });
    expect(r.status).toBe(200);
    const c = await settled(`docker-${container}`, status);
    expect(c.Output).toBe(output);
    expect(readFileSync(join(dir, 'docker-argv'), 'utf8')).toContain(`exec -- ${container} /bin/check --quick\n`);
  });

  test('docker_container_id and script_args in snake_case, inside a service', async () => {
    expect((await put('/v1/agent/service/register', { name: 'boxed', check: { docker_container_id: 'ok-box', script_args: ['/bin/probe'], interval: '50ms' } })).status).toBe(200);
    expect((await settled('service:boxed', 'passing')).Output).toBe('healthy from /bin/probe\n');
  });

  test('DockerContainerID without Args is not a check kind (Consul: a TTL is then required)', async () => {
    const r = await put('/v1/agent/check/register', { Name: 'bare', DockerContainerID: 'ok-box', Interval: '10s' });
    expect(r.status).toBe(400);
    expect(r.text).toBe('Invalid check: TTL must be > 0 for TTL checks');
  });
});

describe('without enable_script_checks', () => {
  const refusal = "Scripts are disabled on this agent from remote calls; to enable, configure 'enable_script_checks' to true";

  test.each([
    ['a script check', '/v1/agent/check/register', { Name: 's', ScriptArgs: ['/bin/true'], Interval: '10s' }],
    ['a docker check', '/v1/agent/check/register', { Name: 'd', DockerContainerID: 'ok-box', Args: ['/bin/true'], Interval: '10s' }],
    ['a service with a script check', '/v1/agent/service/register', { Name: 'svc', Checks: [{ TTL: '10s' }, { Args: ['/bin/true'], Interval: '10s' }] }],
  ])('%s through the API is refused with Consul\'s words, and nothing is registered', async (_what, path, body) => {
    const r = await http(closed.url, 'PUT', path, body);
    expect(r.status).toBe(400);
    expect(r.text).toBe(refusal);
    expect((await http(closed.url, 'GET', '/v1/agent/checks')).json).toEqual({});
    expect((await http(closed.url, 'GET', '/v1/agent/services')).json).toEqual({});
  });

  test('HTTP, TCP and TTL checks are not affected', async () => {
    expect((await http(closed.url, 'PUT', '/v1/agent/check/register', { Name: 't', TTL: '10s' })).status).toBe(200);
    expect((await http(closed.url, 'PUT', '/v1/agent/check/deregister/t')).status).toBe(200);
  });
});
