// Issue #36, finding 7: a TTL check's state is saved with its expiry as a wall-clock time (as
// Consul saves it). Restarted with the clock stepped back an hour, the check resumed with an hour
// and its TTL left, so a check passed once stayed passing long after its TTL. No check resumes
// with more than its TTL. One real server with a data dir, restarted under libfaketime.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, libfaketime } from '../support/fake-clock';
import { freePort, spawnAgent, type AgentProcess } from '../support/processes';
import { eventually } from '../support/wait';

const lib = libfaketime();
if ('missing' in lib) console.warn(`ttl-restart test skipped: ${lib.missing}`);
const maybe = 'path' in lib ? test : test.skip;

let dir: string | undefined;
let agent: AgentProcess | undefined;
afterEach(async () => {
  if (agent && agent.child.exitCode === null) {
    agent.child.kill('SIGKILL');
    await agent.exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

maybe('a TTL check passed before a restart under a clock stepped back an hour goes critical after its TTL, not an hour later', async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-ttl-restart-'));
  const clock = new FakeClock((lib as { path: string }).path, join(dir, 'faketime'));
  const [httpPort, serverPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${httpPort}`;
  const start = () => spawnAgent(['-server', '-bootstrap-expect', '1', '-node', 'ttl-node', '-dns-port', '-1', '-data-dir', join(dir!, 'data')], httpPort, serverPort, join(dir!, 'agent.log'), clock.env);
  const status = async () => {
    const checks = (await (await fetch(`${url}/v1/health/node/ttl-node`, { signal: AbortSignal.timeout(2_000) })).json()) as { CheckID: string; Status: string }[];
    return checks.find((c) => c.CheckID === 'beat')?.Status;
  };
  agent = start();
  expect(await eventually(async () => (await fetch(`${url}/v1/status/leader`)).ok && (await (await fetch(`${url}/v1/status/leader`)).json()) !== '', 40_000)).toBe(true);
  const reg = await fetch(`${url}/v1/agent/check/register`, { method: 'PUT', body: JSON.stringify({ ID: 'beat', Name: 'beat', TTL: '6s' }) });
  expect(reg.status).toBe(200);
  expect((await fetch(`${url}/v1/agent/check/pass/beat`, { method: 'PUT' })).status).toBe(200);
  expect(await eventually(async () => (await status()) === 'passing', 10_000)).toBe(true);

  agent.child.kill('SIGTERM');
  await agent.exited;
  clock.set('-1h');
  agent = start();
  expect(await eventually(async () => (await status()) !== undefined, 40_000)).toBe(true);
  const started = performance.now();
  // Its TTL (6 s) from the restart at most, plus the agent's own start and a generous margin.
  const critical = await eventually(async () => (await status()) === 'critical', 25_000, 250);
  expect({ critical, afterMs: Math.round(performance.now() - started) }).toMatchObject({ critical: true });
}, 150_000);
