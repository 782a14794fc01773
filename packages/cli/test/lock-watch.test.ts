// `registry lock` and `registry watch` as real processes against a dev agent: two competing lock
// holders, a semaphore, the child killed when the session is lost, and a watch handler that fires.
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, startDevAgent, waitFor, type TestAgent } from '../../server/test/support/dev-agent';
import { cli, spawnCli } from './support/cli';

let t: TestAgent;
let env: Record<string, string>;
let dir: string;
const started: ReturnType<typeof spawnCli>[] = [];
beforeAll(async () => {
  t = await startDevAgent();
  env = { REGISTRY_HTTP_ADDR: `127.0.0.1:${t.agent.httpPort}` };
  dir = mkdtempSync(join(tmpdir(), 'lock-cli-'));
});
afterAll(async () => {
  for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  await t.stop();
});

const track = (p: ReturnType<typeof spawnCli>) => (started.push(p), p);
const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []);

test('a second holder waits until the first holder\'s child has exited, then runs', async () => {
  const log = join(dir, 'mutex.log');
  const first = track(spawnCli(['lock', 'jobs/mutex', `echo first-start >> ${log}; sleep 2; echo first-end >> ${log}`], env));
  await waitFor(() => lines(log).includes('first-start'), 15_000);
  const second = track(spawnCli(['lock', 'jobs/mutex', `echo second-start >> ${log}`], env));
  expect(await first.exited).toBe(0);
  expect(await second.exited).toBe(0);
  expect(lines(log)).toEqual(['first-start', 'first-end', 'second-start']);
  // Released and cleaned up: the .lock key is gone.
  expect((await http(t.url, 'GET', '/v1/kv/jobs/mutex/.lock')).status).toBe(404);
}, 40_000);

test('the child sees REGISTRY_LOCK_HELD; -child-exit-code makes a failing child exit 2, else 0', async () => {
  const held = await cli(['lock', 'jobs/env', 'echo held=$REGISTRY_LOCK_HELD'], { env });
  expect(held).toMatchObject({ code: 0, stdout: 'held=true\n' });
  expect(await cli(['lock', '-child-exit-code', 'jobs/fail', 'exit 3'], { env })).toMatchObject({ code: 2, stderr: expect.stringMatching(/exit status 3/) });
  expect((await cli(['lock', 'jobs/fail', 'exit 3'], { env })).code).toBe(0);
  // The child's own flags are its own, even ones that look like the lock's.
  expect(await cli(['lock', '-shell=false', 'jobs/argv', 'printf', '%s|', '-n', '-verbose', '-timeout=1s'], { env })).toMatchObject({
    code: 0,
    stdout: '-n|-verbose|-timeout=1s|',
  });
}, 40_000);

test('-n 2 is a semaphore: two children run at once, the third waits for a slot', async () => {
  const log = join(dir, 'sem.log');
  const run = (name: string) => track(spawnCli(['lock', '-n', '2', 'jobs/sem', `echo ${name}-start >> ${log}; sleep 2; echo ${name}-end >> ${log}`], env));
  const a = run('a');
  const b = run('b');
  await waitFor(() => lines(log).filter((l) => l.endsWith('-start')).length === 2, 15_000);
  const c = run('c');
  await Promise.all([a.exited, b.exited, c.exited]);
  const l = lines(log);
  expect(l.indexOf('c-start')).toBeGreaterThan(Math.min(l.indexOf('a-end'), l.indexOf('b-end')));
  expect(l.slice(0, 2).sort()).toEqual(['a-start', 'b-start']);
  expect((await http(t.url, 'GET', '/v1/kv/jobs/sem/?recurse')).status).toBe(404);
}, 40_000);

test('when the session is lost the child is killed and the lock process ends', async () => {
  const log = join(dir, 'lost.log');
  const holder = track(spawnCli(['lock', '-verbose', 'jobs/lost', `echo running >> ${log}; sleep 60; echo not-killed >> ${log}`], env));
  await waitFor(() => lines(log).includes('running'), 15_000);
  const key = (await http(t.url, 'GET', '/v1/kv/jobs/lost/.lock')).json[0];
  expect(key.Session).toMatch(/^[0-9a-f-]{36}$/);
  expect((await http(t.url, 'PUT', `/v1/session/destroy/${key.Session}`)).status).toBe(200);
  const began = Date.now();
  expect(await holder.exited).toBe(0);
  expect(Date.now() - began).toBeLessThan(15_000);
  expect(holder.output()).toMatch(/Lock lost, killing child/);
  expect(lines(log)).toEqual(['running']);
}, 40_000);

test('-timeout gives up when the lock stays held', async () => {
  const log = join(dir, 'timeout.log');
  const holder = track(spawnCli(['lock', 'jobs/busy', `echo in >> ${log}; sleep 5`], env));
  await waitFor(() => lines(log).includes('in'), 15_000);
  const r = await cli(['lock', '-timeout=1s', 'jobs/busy', 'echo never'], { env });
  expect(r).toMatchObject({ code: 1, stderr: expect.stringMatching(/timeout during lock acquisition/) });
  expect(r.stdout).not.toMatch(/never/);
  await holder.exited;
}, 40_000);

test('watch -type key runs the handler with the JSON on stdin, first for the current value and again on a change', async () => {
  const out = join(dir, 'watch.log');
  await cli(['kv', 'put', 'cfg/flag', 'off'], { env });
  const watcher = track(spawnCli(['watch', '-type=key', '-key', 'cfg/flag', '-handler', `cat >> ${out}; echo " index=$REGISTRY_INDEX" >> ${out}`], env));
  await waitFor(() => lines(out).length >= 2, 15_000);
  await cli(['kv', 'put', 'cfg/flag', 'on'], { env });
  await waitFor(() => lines(out).length >= 4, 15_000);
  watcher.kill('SIGINT');
  expect(await watcher.exited).toBe(0);
  const [first, , second, index] = lines(out);
  expect(Buffer.from(JSON.parse(first).Value, 'base64').toString()).toBe('off');
  expect(Buffer.from(JSON.parse(second).Value, 'base64').toString()).toBe('on');
  expect(index).toMatch(/^ index=\d+$/);
}, 40_000);

test('watch without a handler prints each answer; a failing handler ends the watch with exit 1', async () => {
  const printer = track(spawnCli(['watch', '-type', 'services'], env));
  await waitFor(() => /"registry": \[\]/.test(printer.output()), 15_000);
  printer.kill('SIGTERM');
  expect(await printer.exited).toBe(0);
  const failing = await cli(['watch', '-type', 'nodes', '-handler', 'exit 4'], { env });
  expect(failing).toMatchObject({ code: 1, stderr: expect.stringMatching(/Error executing handler: exit status 4/) });
  expect(await cli(['watch', '-type', 'key'], { env })).toMatchObject({ code: 1, stderr: expect.stringMatching(/Must specify a single -key/) });
}, 40_000);
