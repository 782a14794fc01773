// `registry monitor` (Consul 1.4's command/monitor) against a real agent process with ACLs on:
// it streams the agent's lines until SIGINT/SIGTERM (exit 0), says so when the agent goes away
// (exit 1), and fails with Consul's "Error starting monitor: …" for a token without agent:read,
// an unknown level and an agent that cannot be reached.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnAgent, type AgentProcess } from '../../server/test/support/processes';
import { waitFor } from '../../server/test/support/dev-agent';
import { cli, spawnCli } from './support/cli';

jest.setTimeout(120_000);

const MGMT = 'monitor-root-token';
let dir: string;
let agent: AgentProcess;
let addr: string;
const started: ReturnType<typeof spawnCli>[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-monitor-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: MGMT } } }));
  agent = spawnAgent(
    ['-server', '-bootstrap-expect', '1', '-node', 'mon-agent', '-data-dir', join(dir, 'data'), '-config-file', join(dir, 'config.json'), '-dns-port', '-1'],
    await freePort(),
    await freePort(),
    join(dir, 'agent.log'),
  );
  addr = `-http-addr=127.0.0.1:${agent.httpPort}`;
  await waitFor(async () => (await fetch(`${agent.url}/v1/acl/token/self`, { headers: { 'X-Registry-Token': MGMT } })).status === 200, 60_000, 100);
}, 90_000);

afterAll(async () => {
  for (const m of started) if (m.exitCode === null && m.signalCode === null) m.kill('SIGKILL');
  if (agent && agent.child.exitCode === null && agent.child.signalCode === null) {
    agent.child.kill('SIGKILL');
    await agent.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

function monitor(...args: string[]) {
  const m = spawnCli(['monitor', addr, ...args]);
  started.push(m);
  return m;
}

test('without agent:read: Consul\'s error and exit 1; an unknown level likewise', async () => {
  expect(await cli(['monitor', addr])).toEqual({ code: 1, stdout: '', stderr: 'Error starting monitor: Unexpected response code: 403 (Permission denied)\n' });
  expect(await cli(['monitor', addr, `-token=${MGMT}`, '-log-level=loud'])).toEqual({
    code: 1,
    stdout: '',
    stderr: 'Error starting monitor: Unexpected response code: 400 (Unknown log level: loud)\n',
  });
});

test.each(['SIGINT', 'SIGTERM'] as const)('streams the agent\'s lines (recent ones first, then new ones) until %s, then exit 0', async (signal) => {
  const m = monitor(`-token=${MGMT}`, '-log-level=debug');
  // The agent's start is replayed: its leadership line is among its recent lines.
  await waitFor(() => /\[INFO\].*(leader|elected)/i.test(m.output()), 20_000);
  // A new line while attached: a join to a closed port is logged by the agent.
  const closed = await freePort();
  await fetch(`${agent.url}/v1/agent/join/127.0.0.1:${closed}`, { method: 'PUT', headers: { 'X-Registry-Token': MGMT } });
  await waitFor(() => m.output().includes(`127.0.0.1:${closed}`), 20_000);
  m.kill(signal);
  expect(await m.exited).toBe(0);
  expect(m.output()).not.toMatch(/Remote side ended/);
});

test('the agent going away ends the monitor with Consul\'s notice and exit 1; then it cannot be reached', async () => {
  const m = monitor(`-token=${MGMT}`);
  await waitFor(() => /\[INFO\]/.test(m.output()), 20_000);
  agent.child.kill('SIGTERM');
  await agent.exited;
  expect(await m.exited).toBe(1);
  expect(m.output()).toMatch(/\n\nRemote side ended the monitor! This usually means that the\nremote side has exited or crashed\.\n$/);
  expect(await cli(['monitor', addr, `-token=${MGMT}`])).toEqual({ code: 1, stdout: '', stderr: `Error starting monitor: connection refused 127.0.0.1:${agent.httpPort}\n` });
});
