// Watches from the config file (issue 31: a `watches` key used to end the start): one real `registry
// agent` process whose config holds watches of several types, half with script handlers (`args`,
// and the deprecated shell `handler`) that record what they are given, half with HTTP handlers
// posting to a server of the test's. Each must fire first with the current value and again on a
// change, with the JSON the HTTP API answers and the index in REGISTRY_INDEX / X-Registry-Index
// (and CONSUL_INDEX / X-Consul-Index under consul_compat); a reload adds and removes watches.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentProc, whenReady, type AgentProc } from '../lifecycle/agent-process';
import { freePort } from '../support/ports';
import { eventually, sleep } from '../support/wait';

jest.setTimeout(120_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-watches-'));
const configFile = join(dir, 'agent.json');
const recorder = join(dir, 'record.sh');
let agent: AgentProc | undefined;
let sink: Server | undefined;
let sinkPort = 0;

interface Posted {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}
const posted: Posted[] = [];

/** One line per run: "<REGISTRY_INDEX>|<CONSUL_INDEX>|<stdin JSON>". */
interface Fired {
  index: string;
  consulIndex: string;
  value: any;
}
function fired(name: string): Fired[] {
  const file = join(dir, `${name}.log`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [index, consulIndex, ...rest] = line.split('|');
      return { index: index!, consulIndex: consulIndex!, value: JSON.parse(rest.join('|')) };
    });
}
const postedTo = (path: string) => posted.filter((p) => p.path === path);

const script = (name: string) => ({ args: ['/bin/sh', recorder, name] });
const http = (path: string, extra: Record<string, unknown> = {}) => ({ handler_type: 'http', http_handler_config: { path: `http://127.0.0.1:${sinkPort}${path}`, ...extra } });

function writeConfig(watches: unknown[]): void {
  writeFileSync(configFile, JSON.stringify({ http_config: { consul_compat: true }, watches }));
}

async function call(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${agent!.url}${path}`, { method, body, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  writeFileSync(recorder, `printf '%s|%s|' "$REGISTRY_INDEX" "$CONSUL_INDEX" >> "${dir}/$1.log"\ncat >> "${dir}/$1.log"\n`);
  chmodSync(recorder, 0o755);
  sinkPort = await freePort();
  sink = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posted.push({ path: req.url ?? '', method: req.method ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => sink!.listen(sinkPort, '127.0.0.1', () => r()));
  writeConfig([
    { type: 'key', key: 'cfg/flag', ...script('key') },
    { type: 'keyprefix', prefix: 'app/', ...http('/keyprefix', { method: 'PUT', header: { 'X-Test': ['one'] } }) },
    { type: 'service', service: 'api', tag: 'v1', ...script('service') },
    { type: 'checks', state: 'critical', ...http('/checks') },
    { type: 'event', name: 'deploy', handler: `sh ${recorder} event` },
    { type: 'services', ...http('/services') },
  ]);
  agent = await startAgentProc(['-dev', '-node', 'watcher', '-config-file', configFile], join(dir, 'agent.log'));
  await whenReady(agent, 'watcher');
});

afterAll(async () => {
  await agent?.stop();
  sink?.closeAllConnections();
  await new Promise((r) => sink?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

test('key: fires first with null, then with the entry as the KV API answers it, the index in the environment', async () => {
  expect(await eventually(() => fired('key').length >= 1, 30_000)).toBe(true);
  expect(fired('key')[0]!.value).toBeNull();
  expect((await call('PUT', '/v1/kv/cfg/flag', 'on')).text).toBe('true');
  expect(await eventually(() => fired('key').some((f) => f.value !== null), 15_000)).toBe(true);
  const last = fired('key').at(-1)!;
  expect(last.value).toMatchObject({ Key: 'cfg/flag', Value: Buffer.from('on').toString('base64'), Flags: 0 });
  // REGISTRY_INDEX is the answer's index; consul_compat also sets CONSUL_INDEX.
  expect(Number(last.index)).toBeGreaterThanOrEqual(last.value.ModifyIndex);
  expect(last.consulIndex).toBe(last.index);
});

test('keyprefix (HTTP handler, PUT): the entries under the prefix as the body, with the configured and index headers', async () => {
  expect(await eventually(() => postedTo('/keyprefix').length >= 1, 30_000)).toBe(true);
  expect(postedTo('/keyprefix')[0]!.body).toBeNull(); // nothing under app/ yet: Consul's api gives nil
  await call('PUT', '/v1/kv/app/a', '1');
  await call('PUT', '/v1/kv/app/b', '2');
  expect(await eventually(() => (postedTo('/keyprefix').at(-1)!.body as unknown[] | null)?.length === 2, 15_000)).toBe(true);
  const last = postedTo('/keyprefix').at(-1)!;
  expect(last.method).toBe('PUT');
  expect((last.body as Array<{ Key: string }>).map((e) => e.Key)).toEqual(['app/a', 'app/b']);
  expect(last.headers['content-type']).toBe('application/json');
  expect(last.headers['x-test']).toBe('one');
  expect(Number(last.headers['x-registry-index'])).toBeGreaterThan(0);
  expect(last.headers['x-consul-index']).toBe(last.headers['x-registry-index']);
});

test('service with a tag: the health entries of tagged instances only', async () => {
  expect(await eventually(() => fired('service').length >= 1, 30_000)).toBe(true);
  expect(fired('service')[0]!.value).toEqual([]);
  expect((await call('PUT', '/v1/agent/service/register', JSON.stringify({ ID: 'api-2', Name: 'api', Tags: ['v2'], Port: 2 }))).status).toBe(200);
  expect((await call('PUT', '/v1/agent/service/register', JSON.stringify({ ID: 'api-1', Name: 'api', Tags: ['v1'], Port: 1 }))).status).toBe(200);
  expect(await eventually(() => fired('service').at(-1)!.value.length === 1, 15_000)).toBe(true);
  expect(fired('service').at(-1)!.value[0]).toMatchObject({ Node: { Node: 'watcher' }, Service: { ID: 'api-1', Service: 'api', Tags: ['v1'], Port: 1 } });
});

test('checks in state critical (HTTP handler, POST by default): a new critical check arrives', async () => {
  expect(await eventually(() => postedTo('/checks').length >= 1, 30_000)).toBe(true);
  expect((await call('PUT', '/v1/agent/check/register', JSON.stringify({ Name: 'disk', TTL: '30s' }))).status).toBe(200);
  expect(await eventually(() => (postedTo('/checks').at(-1)!.body as Array<{ CheckID: string }>).some((c) => c.CheckID === 'disk'), 15_000)).toBe(true);
  const last = postedTo('/checks').at(-1)!;
  expect(last.method).toBe('POST');
  expect((last.body as Array<{ CheckID: string; Status: string }>).find((c) => c.CheckID === 'disk')).toMatchObject({ Node: 'watcher', Status: 'critical', Name: 'disk' });
});

test('event (deprecated shell handler): each run gets only the events fired since the last one', async () => {
  expect(await eventually(() => fired('event').length >= 1, 30_000)).toBe(true);
  expect(fired('event')[0]!.value).toEqual([]);
  expect((await call('PUT', '/v1/event/fire/deploy', 'p1')).status).toBe(200);
  expect(await eventually(() => fired('event').length >= 2, 15_000)).toBe(true);
  expect((await call('PUT', '/v1/event/fire/other', 'x')).status).toBe(200); // another name: not this watch's
  expect((await call('PUT', '/v1/event/fire/deploy', 'p2')).status).toBe(200);
  expect(await eventually(() => fired('event').length >= 3, 15_000)).toBe(true);
  const runs = fired('event').slice(1).map((f) => (f.value as Array<{ Name: string; Payload: string }>).map((e) => [e.Name, Buffer.from(e.Payload, 'base64').toString()]));
  expect(runs).toEqual([[['deploy', 'p1']], [['deploy', 'p2']]]);
});

test('services (HTTP handler): the catalog’s service map', async () => {
  expect(await eventually(() => Object.hasOwn((postedTo('/services').at(-1)?.body as object) ?? {}, 'api'), 30_000)).toBe(true);
  expect((postedTo('/services').at(-1)!.body as Record<string, string[]>).api!.sort()).toEqual(['v1', 'v2']);
});

test('a reload replaces the watches: a new one starts, a removed one no longer fires', async () => {
  writeConfig([
    { type: 'key', key: 'cfg/flag', ...script('key') },
    { type: 'key', key: 'cfg/new', ...script('new') },
  ]);
  expect((await call('PUT', '/v1/agent/reload')).status).toBe(200);
  expect(await eventually(() => fired('new').length >= 1, 30_000)).toBe(true);
  expect(fired('new')[0]!.value).toBeNull();
  await call('PUT', '/v1/kv/cfg/new', 'n');
  expect(await eventually(() => fired('new').some((f) => f.value?.Key === 'cfg/new'), 15_000)).toBe(true);
  // The removed keyprefix watch: a change under app/ reaches nobody.
  const before = postedTo('/keyprefix').length;
  await call('PUT', '/v1/kv/app/c', '3');
  await call('PUT', '/v1/kv/cfg/new', 'n2'); // the kept and new watches still run: this one fires
  expect(await eventually(() => fired('new').some((f) => f.value && Buffer.from(f.value.Value, 'base64').toString() === 'n2'), 15_000)).toBe(true);
  await sleep(1_000);
  expect(postedTo('/keyprefix').length).toBe(before);
  expect(agent!.log()).toMatch(/watches: 2/);
  expect(agent!.log()).not.toMatch(/BUG:/);
});
