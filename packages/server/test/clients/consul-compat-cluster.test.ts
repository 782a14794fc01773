// Issue 15: stock, unpatched Consul clients against a 3-server cluster of real processes started with
// `-consul-compat` (ACLs on, default deny). No header renaming and no token workaround on the client
// side — the clients speak Consul's names (X-Consul-Token out, X-Consul-Index & co. back):
// - node-consul 2.0.1 (npm `consul`, as used unpatched against Consul);
// - Debian's python3-consul 0.7.1, driven through python_consul_compat.py. `.ci/run` installs it with
//   apt when missing; where it cannot be imported, that test is skipped with a printed reason.
// The patched, non-compat use of node-consul stays in node-consul.test.ts.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Consul from 'consul';
import { ClusterHarness } from '../cluster/support/cluster-harness';
// Helpers only (node-consul's own `ctx` option and parseQueryMeta); no hook from that file is installed here.
import { queryMeta, withResponse } from './registry-consul';
import { waitFor } from '../support/dev-agent';

jest.setTimeout(120_000);

const ROOT = 'c0ffee00-0000-4000-8000-00000c0c1a57';
const SCRIPT = join(__dirname, 'python_consul_compat.py');

/** A python3 that can `import consul` (pyenv's shim may not see Debian's dist-packages), or why not. */
function findPython(): { python?: string; reason?: string } {
  const tried: string[] = [];
  for (const candidate of [process.env.PYTHON_CONSUL_PYTHON, 'python3', '/usr/bin/python3'].filter(Boolean) as string[]) {
    try {
      const version = execFileSync(candidate, ['-c', 'import consul; print(consul.__version__)'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
      return { python: candidate, reason: `python-consul ${version}` };
    } catch (err) {
      tried.push(`${candidate}: ${((err as { stderr?: string }).stderr ?? String(err)).trim().split('\n').pop()}`);
    }
  }
  return { reason: `python-consul is not importable (${tried.join('; ')}); install Debian's python3-consul (.ci/run does)` };
}

let cluster: ClusterHarness;
let dir: string;
let leader: number;
let followers: number[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-compat-'));
  const config = join(dir, 'acl.json');
  writeFileSync(config, JSON.stringify({ acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: ROOT } } }));
  cluster = await ClusterHarness.start({ size: 3, extraArgs: ['-consul-compat', '-config-file', config] });
  leader = await cluster.waitForLeader(20_000);
  followers = [0, 1, 2].filter((i) => i !== leader);
  // Ready once the management token works and every server's node is in the catalog.
  await waitFor(async () => {
    const r = await cluster.http(followers[0]!, 'GET', '/v1/catalog/nodes', undefined, { headers: { 'X-Consul-Token': ROOT } });
    return r.status === 200 && r.json<unknown[]>().length === 3;
  }, 20_000);
});
afterAll(async () => {
  await cluster?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('node-consul 2.0.1, stock', () => {
  let consul: Consul;
  let other: Consul;
  /** node-consul's typings omit the common query options (index, wait, ctx); the calls accept them. */
  let call: any;
  beforeAll(() => {
    // Its own `defaults.token` option: sent as X-Consul-Token. No hooks, no extra headers.
    consul = new Consul({ host: '127.0.0.1', port: cluster.servers[followers[0]!]!.httpPort, defaults: { token: ROOT } });
    other = new Consul({ host: '127.0.0.1', port: cluster.servers[followers[1]!]!.httpPort, defaults: { token: ROOT } });
    call = consul;
  });
  afterAll(() => {
    consul?.destroy();
    other?.destroy();
  });

  test('ACL token header: its token option is honoured, no token is refused', async () => {
    const anonymous = new Consul({ host: '127.0.0.1', port: cluster.servers[followers[0]!]!.httpPort });
    try {
      await expect(anonymous.kv.set('denied', 'x')).rejects.toMatchObject({ statusCode: 403 });
    } finally {
      anonymous.destroy();
    }
    expect(await consul.kv.set('acl/ok', 'x')).toBe(true);
    expect(await consul.kv.get('acl/ok')).toMatchObject({ Value: 'x' });
    // A per-call token replaces the default one (both sent as X-Consul-Token).
    await expect(call.kv.get({ key: 'acl/ok', token: 'not-a-token' })).rejects.toMatchObject({ statusCode: 403 });
  });

  test('register (catalog and agent) and health with passing', async () => {
    await consul.catalog.register({
      node: 'web-1',
      address: '10.0.0.1',
      service: { id: 'web-a', service: 'web', port: 80 },
      check: { checkid: 'web-alive', name: 'alive', serviceid: 'web-a', status: 'passing' },
    });
    await consul.catalog.register({
      node: 'web-2',
      address: '10.0.0.2',
      service: { id: 'web-b', service: 'web', port: 81 },
      check: { checkid: 'web-alive', name: 'alive', serviceid: 'web-b', status: 'critical' },
    });
    await consul.agent.service.register({ name: 'agent-svc', id: 'agent-svc-1', port: 7000 });
    expect((await consul.catalog.service.nodes('web')).map((s: { ServiceID: string }) => s.ServiceID).sort()).toEqual(['web-a', 'web-b']);
    const passing = await consul.health.service({ service: 'web', passing: true });
    expect(passing.map((e: { Service: { ID: string } }) => e.Service.ID)).toEqual(['web-a']);
    expect(await consul.health.service({ service: 'agent-svc', passing: true })).toHaveLength(1);
  });

  test('KV get/put/CAS, with the index metadata read from X-Consul-* headers', async () => {
    expect(await consul.kv.set('app/key', 'v1')).toBe(true);
    const [res, entry] = await call.kv.get({ key: 'app/key', ctx: withResponse() });
    expect(entry).toMatchObject({ Key: 'app/key', Value: 'v1' });
    const meta = queryMeta(res);
    expect(BigInt(meta.LastIndex!)).toBeGreaterThan(0n);
    expect(meta.KnownLeader).toBe(true);
    expect(typeof meta.LastContact).toBe('number');
    const stale = await call.kv.set({ key: 'app/key', value: 'x', cas: entry.ModifyIndex - 1, ctx: withResponse() });
    expect(stale[1]).toBe(false);
    expect(await consul.kv.set({ key: 'app/key', value: 'v2', cas: entry.ModifyIndex })).toBe(true);
    expect((await consul.kv.get('app/key'))!.Value).toBe('v2');
  });

  test('session lock acquire/release', async () => {
    const a = (await consul.session.create({ name: 'a', lockdelay: '0s' })).ID;
    const b = (await consul.session.create({ name: 'b', lockdelay: '0s' })).ID;
    expect(await consul.kv.set({ key: 'locks/leader', value: 'a', acquire: a })).toBe(true);
    // A refused acquire is answered `false`, which node-consul resolves as undefined.
    expect(await consul.kv.set({ key: 'locks/leader', value: 'b', acquire: b })).toBeUndefined();
    expect(await consul.kv.get('locks/leader')).toMatchObject({ Session: a, LockIndex: 1 });
    expect(await consul.kv.set({ key: 'locks/leader', value: 'a', release: a })).toBe(true);
    expect(await consul.kv.set({ key: 'locks/leader', value: 'b', acquire: b })).toBe(true);
    expect(await consul.kv.get('locks/leader')).toMatchObject({ Session: b, LockIndex: 2 });
    await consul.session.destroy(a);
    await consul.session.destroy(b);
  });

  test('consul.watch wakes on a change written through another server', async () => {
    await consul.kv.set('watched', 'v1');
    const seen: string[] = [];
    const errors: unknown[] = [];
    const watch = consul.watch({ method: consul.kv.get, options: { key: 'watched', wait: '5s' } as any });
    watch.on('change', (data: { Value: string } | undefined) => seen.push(data?.Value ?? '<none>'));
    watch.on('error', (err: unknown) => errors.push(err));
    try {
      await waitFor(() => seen.length === 1, 10_000);
      await other.kv.set('watched', 'v2');
      await waitFor(() => seen.length === 2, 10_000);
    } finally {
      watch.end();
    }
    expect(seen).toEqual(['v1', 'v2']);
    expect(errors).toEqual([]);
  });
});

const py = findPython();
const pyTest = py.python ? test : test.skip;
if (!py.python) console.log(`python3-consul test skipped: ${py.reason}`);

pyTest(`python-consul (Debian python3-consul), stock: ${py.reason}`, async () => {
  const port = cluster.servers[followers[1]!]!.httpPort;
  const otherPort = cluster.servers[leader]!.httpPort;
  const env = { ...process.env };
  delete env.CONSUL_HTTP_TOKEN;
  delete env.CONSUL_HTTP_ADDR;
  const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number }>((resolve) => {
    execFile(py.python!, [SCRIPT, '127.0.0.1', String(port), String(otherPort), ROOT], { env, timeout: 90_000 }, (err, stdout, stderr) => {
      resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 });
    });
  });
  if (code !== 0) throw new Error(`python_consul_compat.py exited ${code}\n${stdout}\n${stderr}`);
  const steps = stdout.split('\n').filter((l) => l.startsWith('ok '));
  expect(steps).toEqual([
    'ok acl token: ?token= and X-Consul-Token accepted, none refused',
    'ok register (catalog and agent) and catalog reads',
    'ok health service/passing/state/node',
    'ok kv get/put/cas/keys/delete',
    'ok session lock acquire/release',
    'ok blocking watch (kv and health) wakes on change',
    'ok consul header names on responses',
  ]);
  expect(stdout).toMatch(/^python-consul 0\.7\.1$/m);
  expect(stdout.trim().split('\n').pop()).toBe('all ok');
});
