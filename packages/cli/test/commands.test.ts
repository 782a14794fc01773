// The other subcommands as real processes against a dev agent: Consul's columns and messages.
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, startDevAgent, type TestAgent } from '../../server/test/support/dev-agent';
import { cli } from './support/cli';

let t: TestAgent;
let env: Record<string, string>;
let dir: string;
beforeAll(async () => {
  t = await startDevAgent();
  env = { REGISTRY_HTTP_ADDR: `127.0.0.1:${t.agent.httpPort}` };
  dir = mkdtempSync(join(tmpdir(), 'cmd-cli-'));
  await http(t.url, 'PUT', '/v1/catalog/register', { Node: 'ext-1', Address: '10.1.0.1', NodeMeta: { rack: 'r1' }, Service: { Service: 'db', Tags: ['primary', 'v2'], Port: 5432 } });
});
afterAll(async () => {
  await t.stop();
});
const run = (...args: string[]) => cli(args, { env });

test('version needs no agent', async () => {
  expect(await cli(['version'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Registry v\d+\.\d+\.\d+\n/) });
});

test('members has Consul\'s columns; -detailed shows tags; -status filters (no match: exit 2)', async () => {
  const plain = await run('members');
  expect(plain.stdout).toMatch(/^Node\s+Address\s+Status\s+Type\s+Build\s+Protocol\s+DC\s+Segment$/m);
  expect(plain.stdout).toMatch(/^test-agent\s+127\.0\.0\.1:\d+\s+alive\s+server\s+\d+\.\d+\.\d+\s+2\s+dc1\s+<all>$/m);
  expect((await run('members', '-detailed')).stdout).toMatch(/^test-agent\s+127\.0\.0\.1:\d+\s+alive\s+.*role=registry/m);
  expect((await run('members', '-status=alive')).stdout).toMatch(/test-agent/);
  expect(await run('members', '-status=failed')).toMatchObject({ code: 2, stdout: '' });
});

test('members -status and event filters are RE2, as the agent\'s: a back-reference or lookahead is refused before any request', async () => {
  expect((await run('members', '-status=(?i)^ALI')).stdout).toMatch(/test-agent/);
  expect(await run('members', '-status=(a)\\1')).toMatchObject({ code: 1, stderr: expect.stringMatching(/Failed to compile status regexp: error parsing regexp: invalid escape sequence/i) });
  expect(await run('event', '-name=deploy', '-node=x(?=y)')).toMatchObject({ code: 1, stderr: expect.stringMatching(/Failed to compile node filter regexp: error parsing regexp: .*Perl syntax/i) });
});

test('info prints the agent\'s stats by section', async () => {
  expect((await run('info')).stdout).toMatch(/^raft:\n(\t\S+ = .*\n)+/m);
});

test('catalog nodes and services take -service, -node-meta, -tags, -node and -detailed', async () => {
  expect((await run('catalog', 'nodes', '-service=db')).stdout).toMatch(/^ext-1\s+10\.1\.0\.1\s+dc1$/m);
  expect((await run('catalog', 'nodes', '-node-meta', 'rack=r1')).stdout.trim().split('\n')).toHaveLength(2);
  expect((await run('catalog', 'nodes', '-detailed')).stdout).toMatch(/^Node\s+ID\s+Address\s+DC\s+TaggedAddresses\s+Meta$/m);
  expect((await run('catalog', 'services', '-tags')).stdout).toMatch(/^db\s+primary,v2$/m);
  expect((await run('catalog', 'services', '-node', 'ext-1')).stdout).toBe('db\n');
  expect(await run('catalog', 'nodes', '-service=none')).toMatchObject({ code: 0, stderr: expect.stringMatching(/No nodes match/) });
});

test('operator raft list-peers shows the leader with Consul\'s columns', async () => {
  const r = await run('operator', 'raft', 'list-peers');
  expect(r.stdout).toMatch(/^Node\s+ID\s+Address\s+State\s+Voter\s+RaftProtocol$/m);
  expect(r.stdout).toMatch(/^test-agent\s+[0-9a-f-]{36}\s+127\.0\.0\.1:\d+\s+leader\s+true\s+\d+$/m);
  expect(await run('operator', 'raft', 'remove-peer')).toMatchObject({ code: 1, stderr: expect.stringMatching(/Must specify either -id or -address/) });
});

test('intention create, get, check (exit 2 when denied), match and delete', async () => {
  expect(await run('intention', 'create', 'web', 'db')).toMatchObject({ code: 0, stdout: 'Created: web => db (allow)\n' });
  expect(await run('intention', 'create', '-deny', '-meta', 'owner=ops', 'batch', 'db')).toMatchObject({ code: 0, stdout: 'Created: batch => db (deny)\n' });
  const got = await run('intention', 'get', 'batch', 'db');
  expect(got.stdout).toMatch(/^Action:\s+deny$/m);
  expect(got.stdout).toMatch(/^Meta\[owner\]:\s+ops$/m);
  const id = /^ID:\s+(\S+)$/m.exec(got.stdout)![1];
  expect((await run('intention', 'get', id)).stdout).toMatch(/^Source:\s+batch$/m);
  expect(await run('intention', 'check', 'web', 'db')).toMatchObject({ code: 0, stdout: 'Allowed\n' });
  expect(await run('intention', 'check', 'batch', 'db')).toMatchObject({ code: 2, stdout: 'Denied\n' });
  expect((await run('intention', 'match', 'db')).stdout).toBe('batch => db (deny)\nweb => db (allow)\n');
  expect((await run('intention', 'match', '-source', 'web')).stdout).toBe('web => db (allow)\n');
  expect(await run('intention', 'delete', 'batch', 'db')).toMatchObject({ code: 0, stdout: 'Intention deleted.\n' });
  expect(await run('intention', 'get', 'batch', 'db')).toMatchObject({ code: 1, stderr: expect.stringMatching(/not found/) });
});

test('services register and deregister a definition file (HCL) and flags', async () => {
  const file = join(dir, 'web.hcl');
  writeFileSync(file, 'service {\n  name = "web"\n  port = 8080\n  tags = ["blue"]\n  meta { team = "a" }\n}\n');
  expect(await run('services', 'register', file)).toMatchObject({ code: 0, stdout: 'Registered service: web\n' });
  const svc = (await http(t.url, 'GET', '/v1/agent/service/web')).json;
  expect(svc).toMatchObject({ Service: 'web', Port: 8080, Tags: ['blue'], Meta: { team: 'a' } });
  expect(await run('services', 'deregister', file)).toMatchObject({ code: 0, stdout: 'Deregistered service: web\n' });
  expect((await http(t.url, 'GET', '/v1/agent/service/web')).status).toBe(404);
  expect(await run('services', 'register', '-name=api', '-port=9000', '-tag=x')).toMatchObject({ code: 0, stdout: 'Registered service: api\n' });
  expect(await run('services', 'deregister', '-id=api')).toMatchObject({ code: 0, stdout: 'Deregistered service: api\n' });
});

test('event fires through the agent and prints its ID', async () => {
  const r = await run('event', '-name', 'deploy', 'v1.2');
  expect(r).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Event ID: [0-9a-f-]{36}\n$/) });
  const events = (await http(t.url, 'GET', '/v1/event/list?name=deploy')).json;
  expect(events.map((e: { ID: string }) => e.ID)).toContain(r.stdout.slice('Event ID: '.length).trim());
  expect(await run('event', '-tag', 'x', '-name', 'deploy')).toMatchObject({ code: 1, stderr: expect.stringMatching(/tag filter without service filter/) });
});

test('maint -enable lists and -disable clears node maintenance; reload is triggered', async () => {
  expect(await run('maint', '-enable', '-reason', 'patching')).toMatchObject({ code: 0, stdout: 'Node maintenance is now enabled\n' });
  expect((await run('maint')).stdout).toMatch(/^Node:\n {2}Name: {3}test-agent\n {2}Reason: patching$/m);
  expect(await run('maint', '-disable')).toMatchObject({ code: 0, stdout: 'Node maintenance is now disabled\n' });
  expect((await run('maint')).stdout).toBe('');
  expect(await run('maint', '-enable', '-disable')).toMatchObject({ code: 1, stderr: expect.stringMatching(/Only one of -enable or -disable/) });
  expect(await run('reload')).toMatchObject({ code: 0, stdout: 'Configuration reload triggered\n' });
});

test('snapshot save, inspect and restore round-trip the KV store', async () => {
  const file = join(dir, 'backup.snap');
  await run('kv', 'put', 'snap/k', 'before');
  const saved = await run('snapshot', 'save', file);
  expect(saved).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Saved and verified snapshot to index \d+\n$/) });
  expect(existsSync(file)).toBe(true);
  const inspected = (await run('snapshot', 'inspect', file)).stdout;
  expect(inspected).toMatch(/^ID\s+\d+-\d+-\d+$/m);
  expect(inspected).toMatch(/^Index\s+\d+$/m);
  await run('kv', 'put', 'snap/k', 'after');
  expect(await run('snapshot', 'restore', file)).toMatchObject({ code: 0, stdout: 'Restored snapshot\n' });
  expect((await run('kv', 'get', 'snap/k')).stdout).toBe('before\n');
  writeFileSync(join(dir, 'bad.snap'), 'not a snapshot');
  expect((await run('snapshot', 'inspect', join(dir, 'bad.snap'))).code).toBe(1);
});

test('join reports a failure to reach the address; force-leave of an unknown node succeeds quietly, as in Consul', async () => {
  expect(await run('join', '127.0.0.1:1')).toMatchObject({ code: 1, stderr: expect.stringMatching(/Error joining address '127\.0\.0\.1:1'/) });
  expect(await run('force-leave', 'no-such-node')).toMatchObject({ code: 0 });
});
