// A start never dies on state the agent wrote itself (issue 31), and never silently drops it
// (issue 35): a persisted service or check definition that no longer parses, has the wrong shape
// or no longer registers is skipped with a logged reason and renamed to `<file>.bad`, and the
// agent starts with everything else. A real server process on a data dir prepared by a first run.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { persistingServer, type AgentProc } from '../lifecycle/agent-process';
import { eventually } from '../support/wait';

jest.setTimeout(90_000);

const server = persistingServer('registry-persisted-', 'persisted');
const { dataDir } = server;
const start = (): Promise<AgentProc> => server.start();

const put = async (a: AgentProc, path: string, body: unknown) => (await fetch(`${a.url}${path}`, { method: 'PUT', body: JSON.stringify(body) })).status;
const getJson = async (a: AgentProc, path: string) => (await (await fetch(`${a.url}${path}`)).json()) as Record<string, unknown>;

test('unloadable persisted definitions are set aside with a reason; the rest starts', async () => {
  let a = await start();
  expect(await put(a, '/v1/agent/service/register', { Name: 'good', Port: 1 })).toBe(200);
  expect(await put(a, '/v1/agent/check/register', { Name: 'good-ttl', TTL: '1h' })).toBe(200);
  await a.stop();

  // What a crash, an older version or a hand edit may leave behind.
  const services = join(dataDir, 'services');
  const checks = join(dataDir, 'checks');
  writeFileSync(join(services, 'cut-short'), '{"ID":"half","Service":{"Na');
  writeFileSync(join(services, 'wrong-shape'), JSON.stringify(['not', 'a', 'definition']));
  // Parses, but no longer registers: a duration beyond Go's int64, a service name missing.
  writeFileSync(join(checks, 'overflow'), JSON.stringify({ ID: 'overflow', Check: { Name: 'overflow', TTL: '3000000h' } }));
  writeFileSync(join(services, 'nameless'), JSON.stringify({ ID: 'nameless', Service: { Port: 1 } }));
  writeFileSync(join(checks, 'orphan'), JSON.stringify({ ID: 'orphan', Check: { Name: 'orphan', TTL: '1h', ServiceID: 'no-such-service' } }));

  a = await start();
  const ok = await eventually(async () => 'good-ttl' in (await getJson(a, '/v1/agent/checks')), 15_000);
  expect(ok).toBe(true);
  expect(Object.keys(await getJson(a, '/v1/agent/services'))).toEqual(['good']);
  // Each file that does not load is kept aside for the operator, and the log says why.
  await eventually(() => readdirSync(checks).filter((f) => f.endsWith('.bad')).length === 2, 10_000);
  expect(readdirSync(services).filter((f) => f.endsWith('.bad')).sort()).toEqual(['cut-short.bad', 'nameless.bad', 'wrong-shape.bad']);
  expect(readdirSync(checks).filter((f) => f.endsWith('.bad')).sort()).toEqual(['orphan.bad', 'overflow.bad']);
  for (const name of ['cut-short', 'wrong-shape', 'nameless']) expect(existsSync(join(services, name))).toBe(false);
  const log = a.log();
  expect(log).toMatch(/persisted definition no longer loads; skipped and set aside.*cut-short.*unreadable/);
  expect(log).toMatch(/persisted definition no longer loads; skipped and set aside.*time: invalid duration/);
  expect(log).toMatch(/persisted definition no longer loads; skipped and set aside.*Missing service name/);
  expect(log).toMatch(/persisted definition no longer loads; skipped and set aside.*does not exist/);
  // And it serves writes.
  expect(await put(a, '/v1/agent/service/register', { Name: 'after', Port: 1 })).toBe(200);
  await a.stop();

  // The next start does not trip on them again.
  a = await start();
  await eventually(async () => 'after' in (await getJson(a, '/v1/agent/services')), 10_000);
  expect(Object.keys(await getJson(a, '/v1/agent/services')).sort()).toEqual(['after', 'good']);
});
