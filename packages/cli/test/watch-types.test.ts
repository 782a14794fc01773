// `registry watch` of types keyprefix, service, checks and event as real processes against a dev
// agent: the handler runs once with the current value, again on each change (the JSON on stdin),
// and not for a change that leaves the watched value as it was.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, startDevAgent, waitFor, type TestAgent } from '../../server/test/support/dev-agent';
import { cli, spawnCli } from './support/cli';

jest.setTimeout(60_000);

let t: TestAgent;
let env: Record<string, string>;
let dir: string;
const started: ReturnType<typeof spawnCli>[] = [];
beforeAll(async () => {
  t = await startDevAgent();
  env = { REGISTRY_HTTP_ADDR: `127.0.0.1:${t.agent.httpPort}` };
  dir = mkdtempSync(join(tmpdir(), 'watch-cli-'));
});
afterAll(async () => {
  for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  await t.stop();
});

/** A watch whose handler appends each JSON it is given as one line of `file`. */
function watch(name: string, ...args: string[]): { fires: () => any[]; stop: () => Promise<number | null> } {
  const file = join(dir, `${name}.log`);
  const p = spawnCli(['watch', ...args, '-handler', `cat >> ${file}`], env);
  started.push(p);
  return {
    fires: () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []),
    stop: async () => {
      p.kill('SIGINT');
      return p.exited;
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 1_000));

test('keyprefix: fires with every key under the prefix, again when one changes, not for a key elsewhere', async () => {
  await cli(['kv', 'put', 'app/a', 'one'], { env });
  const w = watch('keyprefix', '-type', 'keyprefix', '-prefix', 'app/');
  await waitFor(() => w.fires().length === 1, 15_000);
  expect(w.fires()[0].map((e: { Key: string }) => e.Key)).toEqual(['app/a']);

  await cli(['kv', 'put', 'other/x', 'unrelated'], { env });
  await settle();
  await cli(['kv', 'put', 'app/b', 'two'], { env });
  await waitFor(() => w.fires().length >= 2, 15_000);
  await settle();
  const fires = w.fires();
  expect(fires).toHaveLength(2);
  expect(fires[1].map((e: { Key: string; Value: string }) => [e.Key, Buffer.from(e.Value, 'base64').toString()])).toEqual([
    ['app/a', 'one'],
    ['app/b', 'two'],
  ]);
  expect(await w.stop()).toBe(0);
});

test('service: fires with the health entries of the service, again when an instance is added', async () => {
  const register = (id: string) =>
    http(t.url, 'PUT', '/v1/agent/service/register', { Name: 'api', ID: id, Port: 9000, Check: { CheckID: `${id}-ttl`, TTL: '10m', Status: 'passing' } });
  expect((await register('api-1')).status).toBe(200);
  const w = watch('service', '-type', 'service', '-service', 'api');
  await waitFor(() => w.fires().length === 1, 15_000);
  expect(w.fires()[0].map((e: { Service: { ID: string } }) => e.Service.ID)).toEqual(['api-1']);
  expect((await register('api-2')).status).toBe(200);
  await waitFor(() => w.fires().length >= 2, 15_000);
  const last = w.fires().at(-1);
  expect(last.map((e: { Service: { ID: string } }) => e.Service.ID).sort()).toEqual(['api-1', 'api-2']);
  expect(last[0].Checks.map((c: { CheckID: string }) => c.CheckID)).toContain('serfHealth');
  expect(await w.stop()).toBe(0);
});

test('checks -state critical: fires when a check turns critical, with that check', async () => {
  expect((await http(t.url, 'PUT', '/v1/agent/check/register', { CheckID: 'disk', Name: 'disk', TTL: '10m', Status: 'passing' })).status).toBe(200);
  const w = watch('checks', '-type', 'checks', '-state', 'critical');
  await waitFor(() => w.fires().length === 1, 15_000);
  expect(w.fires()[0]).toEqual([]);
  expect((await http(t.url, 'PUT', '/v1/agent/check/fail/disk?note=full')).status).toBe(200);
  await waitFor(() => w.fires().length >= 2, 15_000);
  expect(w.fires().at(-1)).toEqual([expect.objectContaining({ CheckID: 'disk', Status: 'critical', Output: 'full' })]);
  expect(await w.stop()).toBe(0);
});

test('checks -service: the checks of one service', async () => {
  const w = watch('checks-service', '-type', 'checks', '-service', 'api');
  await waitFor(() => w.fires().length === 1, 15_000);
  expect(w.fires()[0].map((c: { CheckID: string }) => c.CheckID).sort()).toEqual(['api-1-ttl', 'api-2-ttl']);
  expect((await http(t.url, 'PUT', '/v1/agent/check/warn/api-1-ttl')).status).toBe(200);
  await waitFor(() => w.fires().length >= 2, 15_000);
  expect(w.fires().at(-1).find((c: { CheckID: string }) => c.CheckID === 'api-1-ttl').Status).toBe('warning');
  expect(await w.stop()).toBe(0);
  expect(await cli(['watch', '-type', 'checks', '-service', 'api', '-state', 'any'], { env })).toMatchObject({ code: 1, stderr: expect.stringMatching(/Cannot specify service and state/) });
});

test('event -name: fires when `registry event` fires an event of that name, not for another name', async () => {
  const w = watch('event', '-type', 'event', '-name', 'deploy');
  await waitFor(() => w.fires().length === 1, 15_000);
  expect(w.fires()[0]).toEqual([]);
  await cli(['event', '-name', 'other', 'x'], { env });
  await settle();
  const fired = await cli(['event', '-name', 'deploy', 'v2'], { env });
  const id = /^Event ID: (\S+)$/m.exec(fired.stdout)![1];
  await waitFor(() => w.fires().length >= 2, 15_000);
  await settle();
  expect(w.fires()).toHaveLength(2);
  const events = w.fires()[1];
  expect(events).toEqual([expect.objectContaining({ ID: id, Name: 'deploy' })]);
  expect(Buffer.from(events[0].Payload, 'base64').toString()).toBe('v2');
  // The next fire hands over only the new event, as Consul's event watch does (the list's index
  // names the last event handed over: its ID folded to 64 bits).
  const third = await cli(['event', '-name', 'deploy', 'v3'], { env });
  const id3 = /^Event ID: (\S+)$/m.exec(third.stdout)![1];
  await waitFor(() => w.fires().length >= 3, 15_000);
  await settle();
  expect(w.fires()).toHaveLength(3);
  expect(w.fires()[2]).toEqual([expect.objectContaining({ ID: id3, Name: 'deploy' })]);
  expect(await w.stop()).toBe(0);
});
