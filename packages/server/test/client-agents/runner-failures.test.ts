// Issue 31 on a client agent: its background runners keep their own failures. A real server and a
// real client (`registry agent` processes); the client has a config-file watch and a short
// anti-entropy interval. While the server runs, the watch fires through the client; once the server
// is gone, every anti-entropy pass fails — each failure is logged with what and why and counted
// (runner="anti-entropy"), and the client goes on serving its own endpoints.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentProc, whenReady, type AgentProc } from '../lifecycle/agent-process';
import { eventually } from '../support/wait';

jest.setTimeout(120_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-client-runners-'));
let server: AgentProc | undefined;
let client: AgentProc | undefined;

afterAll(async () => {
  await client?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = async (a: AgentProc, path: string) => {
  const res = await fetch(`${a.url}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, text: await res.text() };
};
const failures = async (runner: string) => Number(new RegExp(`registry_runner_failures_total\\{runner="${runner}"\\} (\\d+)`).exec((await get(client!, '/v1/agent/metrics?format=prometheus')).text)?.[1] ?? 0);

test('a watch runs on a client; with its server gone, the client’s anti-entropy passes fail, are counted, and the client serves on', async () => {
  server = await startAgentProc(['-dev', '-node', 'runner-server'], join(dir, 'server.log'));
  await whenReady(server, 'runner-server');
  const fired = join(dir, 'fired.log');
  const config = join(dir, 'client.json');
  writeFileSync(
    config,
    JSON.stringify({
      anti_entropy_interval: '1s',
      telemetry: { prometheus_retention_time: '1m' },
      watches: [{ type: 'key', key: 'client/watched', args: ['/bin/sh', '-c', `cat >> "${fired}"`] }],
    }),
  );
  client = await startAgentProc(['-node', 'runner-client', '-data-dir', join(dir, 'client-data'), '-retry-join', `127.0.0.1:${server.serverPort}`, '-config-file', config], join(dir, 'client.log'));
  await whenReady(client, 'runner-client');
  // The watch runs on the client and reads through it.
  expect((await fetch(`${server.url}/v1/kv/client/watched`, { method: 'PUT', body: 'v1' })).status).toBe(200);
  const firedWith = (v: string) => existsSync(fired) && readFileSync(fired, 'utf8').includes(Buffer.from(v).toString('base64'));
  expect(await eventually(() => firedWith('v1'), 30_000)).toBe(true);

  // The client has joined in its own eyes (its first heartbeat was answered): anti-entropy runs.
  const passes = async () => JSON.parse((await get(client!, '/v1/agent/self')).text).Stats.antiEntropy.passes as number;
  expect(await eventually(async () => (await passes()) >= 1, 30_000, 250)).toBe(true);

  await server.stop();
  expect(await eventually(async () => (await failures('anti-entropy')) >= 1, 60_000, 500)).toBe(true);
  expect(client.log()).toMatch(/anti-entropy runner-client failed.*pass failed: /);
  // Still serving what needs no server.
  expect(client.child.exitCode).toBeNull();
  expect((await get(client, '/v1/agent/self')).status).toBe(200);
  expect(JSON.parse((await get(client, '/v1/agent/services')).text)).toEqual({});
  expect(client.log()).not.toMatch(/BUG:/);
});
