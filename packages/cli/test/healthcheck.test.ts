// `registry healthcheck` on loopback (the namespace tests in packages/server/test/cluster/multi-host
// exercise it on real hosts): a server with a leader and the log applied is healthy; one that has
// no leader is not, with the reason, exit 1 — as a container's HEALTHCHECK needs it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevAgent, type TestAgent } from '../../server/test/support/dev-agent';
import { freePort, spawnAgent, type AgentProcess } from '../../server/test/support/processes';
import { eventually } from '../../server/test/support/wait';
import { cli } from './support/cli';

jest.setTimeout(60_000);

let dev: TestAgent | undefined;
let lone: AgentProcess | undefined;
let dir: string | undefined;
afterAll(async () => {
  await dev?.stop();
  if (lone) {
    lone.child.kill('SIGKILL');
    await lone.exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a server with a leader that has applied the log is healthy', async () => {
  dev = await startDevAgent();
  const r = await cli(['healthcheck', '-http-addr', `127.0.0.1:${dev.agent.httpPort}`]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^healthy: server \S+, leader 127\.0\.0\.1:\d+, applied \d+ of \d+$/m);
});

test('a server waiting for the others of -bootstrap-expect 3 is unhealthy, saying why', async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-healthcheck-'));
  const [http, server] = [await freePort(), await freePort()];
  lone = spawnAgent(['-server', '-node', 'lone', '-data-dir', join(dir, 'data'), '-bootstrap-expect', '3'], http, server, join(dir, 'agent.log'));
  const addr = `127.0.0.1:${http}`;
  expect(await eventually(async () => (await fetch(`http://${addr}/v1/agent/self`)).status === 200, 30_000, 200)).toBe(true);
  const r = await cli(['healthcheck', '-http-addr', addr]);
  expect(r.code).toBe(1);
  expect(r.stderr.trim()).toMatch(/^unhealthy: .*no cluster leader/i);
  expect(r.stdout).toBe('');
});

test('an agent that does not answer is unhealthy within the timeout', async () => {
  const port = await freePort();
  const t0 = Date.now();
  const r = await cli(['healthcheck', '-http-addr', `127.0.0.1:${port}`, '-timeout', '1000']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^unhealthy: /);
  expect(Date.now() - t0).toBeLessThan(15_000);
});
