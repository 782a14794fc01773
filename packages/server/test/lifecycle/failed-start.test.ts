// A failed start (issue 11, Lifecycle): an agent that cannot start exits non-zero with the reason
// and leaves no temporary -dev data dir behind. Each agent gets its own TMPDIR so the test sees
// exactly what that process made.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentProc } from './agent-process';

jest.setTimeout(60_000);

let dir: string;
let blocker: Server | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-failstart-'));
});
afterEach(async () => {
  await new Promise<void>((r) => (blocker ? blocker.close(() => r()) : r()));
  blocker = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function occupy(): Promise<number> {
  const server = createServer();
  blocker = server;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as { port: number }).port;
}


test('HTTP port in use: exit 1, the reason printed, and the -dev temp dir removed', async () => {
  const port = await occupy();
  const tmp = mkdtempSync(join(dir, 'tmp-'));
  const a = await startAgentProc(['-dev', '-node', 'failing', '-http-port', String(port)], join(dir, 'agent.log'), { ...process.env, TMPDIR: tmp });
  expect(await a.exited).toBe(1);
  expect(a.log()).toMatch(/EADDRINUSE/);
  // The data dir existed during the start (the server port and Raft come before HTTP) …
  expect(a.log()).toMatch(/server port limits/);
  // … and is gone.
  expect(readdirSync(tmp)).toEqual([]);
});

test('server port in use: exit 1 and no temp dir left', async () => {
  const port = await occupy();
  const tmp = mkdtempSync(join(dir, 'tmp-'));
  const a = await startAgentProc(['-dev', '-node', 'failing', '-server-port', String(port)], join(dir, 'agent.log'), { ...process.env, TMPDIR: tmp });
  expect(await a.exited).toBe(1);
  expect(a.log()).toMatch(/EADDRINUSE/);
  expect(readdirSync(tmp)).toEqual([]);
});

test('bad config: exit 1 naming the problem, nothing made', async () => {
  const tmp = mkdtempSync(join(dir, 'tmp-'));
  const f = join(dir, 'bad.json');
  writeFileSync(f, JSON.stringify({ ports: { http: 'eighty' } }));
  const a = await startAgentProc(['-dev', '-config-file', f], join(dir, 'agent.log'), { ...process.env, TMPDIR: tmp });
  expect(await a.exited).toBe(1);
  expect(a.log()).toContain(`${f}: ports.http must be integer`);
  expect(readdirSync(tmp)).toEqual([]);
});
