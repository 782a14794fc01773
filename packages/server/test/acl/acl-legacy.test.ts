// The legacy ACL API as Consul 1.4.5 serves it (agent/acl_endpoint_legacy.go, agent/consul/
// acl_endpoint_legacy.go, the rules translation of agent/acl_endpoint.go), over HTTP against a dev
// agent with default_policy = deny: a legacy token's ID is its SecretID, Type client|management,
// its Rules in the legacy syntax (every block a prefix rule), and it is a token of the 1.4 tables.
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { MASTER, startAclAgent, type AclAgent } from './acl-agent';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let a: AclAgent;

beforeAll(async () => {
  a = await startAclAgent({ defaultPolicy: 'deny' });
});
afterAll(() => a.stop());

test('create → info → the token works with its legacy rules (every block a prefix) → update → destroy', async () => {
  const rules = 'key "app" { policy = "write" }';
  const c = await a.as(MASTER, 'PUT', '/v1/acl/create', { Name: 'legacy app', Type: 'client', Rules: rules });
  expect(c.status).toBe(200);
  expect(Object.keys(c.json)).toEqual(['ID']);
  const id: string = c.json.ID;
  expect(id).toMatch(UUID);

  const info = await a.as(MASTER, 'GET', `/v1/acl/info/${id}`);
  expect(info.status).toBe(200);
  expect(info.json).toEqual([{ ID: id, Name: 'legacy app', Type: 'client', Rules: rules, CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number) }]);
  expect(Number(info.headers.get('X-Registry-Index'))).toBeGreaterThanOrEqual(info.json[0].ModifyIndex);

  // Legacy `key "app"` is a prefix rule: app/config and apple are both writable; others are not.
  expect((await a.as(id, 'PUT', '/v1/kv/app/config', 'v')).json).toBe(true);
  expect((await a.as(id, 'PUT', '/v1/kv/apple', 'v')).json).toBe(true);
  expect((await a.as(id, 'PUT', '/v1/kv/other', 'v')).status).toBe(403);
  // A client token is no manager.
  expect((await a.as(id, 'GET', '/v1/acl/list')).status).toBe(403);

  // The 1.4 API sees it as a token with Rules (and Legacy in lists), an AccessorID of its own.
  const self = await a.as(id, 'GET', '/v1/acl/token/self');
  expect(self.json).toMatchObject({ SecretID: id, Description: 'legacy app', Rules: rules, Policies: null, Local: false });
  expect(self.json.AccessorID).toMatch(UUID);
  expect(self.json.AccessorID).not.toBe(id);
  const listed = (await a.as(MASTER, 'GET', '/v1/acl/tokens')).json.find((t: { AccessorID: string }) => t.AccessorID === self.json.AccessorID);
  expect(listed).toMatchObject({ Description: 'legacy app', Legacy: true });
  expect(listed).not.toHaveProperty('Rules');

  // Update replaces name, type and rules; the identifiers and CreateIndex stay.
  const u = await a.as(MASTER, 'PUT', '/v1/acl/update', { ID: id, Name: 'renamed', Rules: 'key "other" { policy = "write" }' });
  expect(u.status).toBe(200);
  expect(u.json).toEqual({ ID: id });
  const after = (await a.as(MASTER, 'GET', `/v1/acl/info/${id}`)).json[0];
  expect(after).toMatchObject({ ID: id, Name: 'renamed', Type: 'client', Rules: 'key "other" { policy = "write" }', CreateIndex: info.json[0].CreateIndex });
  expect(after.ModifyIndex).toBeGreaterThan(info.json[0].ModifyIndex);
  expect((await a.as(id, 'GET', '/v1/acl/token/self')).json.AccessorID).toBe(self.json.AccessorID);
  expect((await a.as(id, 'PUT', '/v1/kv/app/config', 'v')).status).toBe(403);
  expect((await a.as(id, 'PUT', '/v1/kv/other/x', 'v')).json).toBe(true);

  const d = await a.as(MASTER, 'PUT', `/v1/acl/destroy/${id}`);
  expect(d.status).toBe(200);
  expect(d.json).toBe(true);
  expect((await a.as(MASTER, 'GET', `/v1/acl/info/${id}`)).json).toEqual([]);
  expect((await a.as(id, 'GET', '/v1/kv/other/x')).status).toBe(403);
  expect((await a.as(id, 'GET', '/v1/kv/other/x')).text).toBe('ACL not found');
  // Destroying an unknown ID is true, as Consul.
  expect((await a.as(MASTER, 'PUT', `/v1/acl/destroy/${id}`)).json).toBe(true);
});

test('a caller-chosen ID, no body (Type client), management type, clone, list', async () => {
  const chosen = await a.as(MASTER, 'PUT', '/v1/acl/create', { ID: 'my-own-legacy-secret', Name: 'chosen', Type: 'management' });
  expect(chosen.json).toEqual({ ID: 'my-own-legacy-secret' });
  // A management token grants everything, ACL writes included.
  expect((await a.as('my-own-legacy-secret', 'PUT', '/v1/kv/anything', 'v')).json).toBe(true);
  const made = await a.as('my-own-legacy-secret', 'PUT', '/v1/acl/create', '');
  expect(made.status).toBe(200);
  const bare = (await a.as(MASTER, 'GET', `/v1/acl/info/${made.json.ID}`)).json[0];
  expect(bare).toMatchObject({ Name: '', Type: 'client', Rules: '' });
  // An empty client token has the default policy (deny) only.
  expect((await a.as(made.json.ID, 'PUT', '/v1/kv/anything', 'v')).status).toBe(403);

  // Clone: a new ID with the same name, type and rules; the clone of the master token is management.
  const clone = await a.as(MASTER, 'PUT', `/v1/acl/clone/${MASTER}`);
  expect(clone.status).toBe(200);
  expect(clone.json.ID).toMatch(UUID);
  expect(clone.json.ID).not.toBe(MASTER);
  expect((await a.as(MASTER, 'GET', `/v1/acl/info/${clone.json.ID}`)).json[0]).toMatchObject({ Name: 'Master Token', Type: 'management', Rules: '' });
  expect((await a.as(clone.json.ID, 'GET', '/v1/acl/list')).status).toBe(200);
  expect((await a.as(MASTER, 'PUT', '/v1/acl/clone/no-such-token')).status).toBe(403);

  // The list: every token with a type (the master token, the legacy ones), not the 1.4 anonymous token.
  const list = await a.as(MASTER, 'GET', '/v1/acl/list');
  expect(list.status).toBe(200);
  const ids = list.json.map((t: { ID: string }) => t.ID);
  expect(ids).toEqual(expect.arrayContaining([MASTER, 'my-own-legacy-secret', made.json.ID, clone.json.ID]));
  expect(ids).not.toContain('anonymous');
  expect(list.json.find((t: { ID: string }) => t.ID === MASTER)).toEqual({
    ID: MASTER,
    Name: 'Master Token',
    Type: 'management',
    Rules: '',
    CreateIndex: expect.any(Number),
    ModifyIndex: expect.any(Number),
  });
  // Anyone holding the secret may read it; an unknown secret reads as [].
  expect((await a.as(undefined, 'GET', '/v1/acl/info/my-own-legacy-secret')).json[0]).toMatchObject({ Type: 'management' });
  expect((await a.as(undefined, 'GET', '/v1/acl/info/nothing-here')).json).toEqual([]);
});

test("Consul's refusals", async () => {
  const t = (body: unknown) => a.as(MASTER, 'PUT', '/v1/acl/create', body);
  expect(await t({ Type: 'root' })).toMatchObject({ status: 400, text: 'Invalid ACL Type' });
  const bad = await t({ Rules: 'key "a" { policy = "nope" }' });
  expect(bad.status).toBe(400);
  expect(bad.text).toMatch(/^ACL rule compilation failed: /);
  expect(await t('{"Name": ')).toMatchObject({ status: 400 });
  expect((await t('{"Name": ')).text).toMatch(/^Request decode failed: /);
  expect(await a.as(MASTER, 'PUT', '/v1/acl/update', { Name: 'x' })).toMatchObject({ status: 400, text: 'ACL ID must be set' });
  expect(await t({ ID: 'deny' })).toMatchObject({ status: 403, text: 'Permission denied: Cannot modify root ACL' });
  expect(await a.as(MASTER, 'PUT', '/v1/acl/destroy/anonymous')).toMatchObject({ status: 403, text: 'Permission denied: Cannot delete anonymous token' });
  // A token of the 1.4 API (policies) cannot be changed through the legacy one.
  const p = await a.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'legacy-test', Rules: 'key_prefix "" { policy = "read" }' });
  const modern = await a.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'modern', Policies: [{ ID: p.json.ID }] });
  expect(await a.as(MASTER, 'PUT', '/v1/acl/update', { ID: modern.json.SecretID, Name: 'x' })).toMatchObject({
    status: 400,
    text: 'Cannot use legacy endpoint to modify a non-legacy token',
  });
  // Nor is it shown by info (it has no Type).
  expect((await a.as(MASTER, 'GET', `/v1/acl/info/${modern.json.SecretID}`)).json).toEqual([]);
  // Writes need management.
  expect((await a.as(modern.json.SecretID, 'PUT', '/v1/acl/create', { Name: 'x' })).status).toBe(403);
  // A legacy token is cloned by the legacy API only.
  const legacy = (await t({ Rules: 'key "" { policy = "read" }' })).json.ID;
  const accessor = (await a.as(legacy, 'GET', '/v1/acl/token/self')).json.AccessorID;
  expect(await a.as(MASTER, 'PUT', `/v1/acl/token/${accessor}/clone`)).toMatchObject({ status: 400, text: 'Cannot clone a legacy ACL with this endpoint' });
  // Updating it through the 1.4 API upgrades it: Type and Rules go, it leaves the legacy API.
  const upgraded = await a.as(MASTER, 'PUT', `/v1/acl/token/${accessor}`, { Description: 'upgraded', Policies: [{ ID: p.json.ID }] });
  expect(upgraded.status).toBe(200);
  expect(upgraded.json).not.toHaveProperty('Rules');
  expect((await a.as(MASTER, 'GET', `/v1/acl/info/${legacy}`)).json).toEqual([]);
});

test('rules translation: a body, and a legacy token by accessor', async () => {
  // Consul's api TestAPI_RulesTranslate_Raw, byte for byte.
  const kinds = ['agent', 'node', 'service', 'key', 'session', 'event', 'query'];
  const input = '#start of policy\n' + kinds.map((r) => `${r} "" {\n   policy = "read"\n}`).join('\n\n');
  const expected = '#start of policy\n' + kinds.map((r) => `${r}_prefix "" {\n  policy = "read"\n}`).join('\n\n');
  const raw = await a.as(MASTER, 'POST', '/v1/acl/rules/translate', input);
  expect(raw.status).toBe(200);
  expect(raw.headers.get('content-type')).toMatch(/^text\/plain/);
  expect(raw.text).toBe(expected);
  // Adjacent one-line attributes are aligned, comments kept, as hcl's printer does.
  const aligned = await a.as(MASTER, 'POST', '/v1/acl/rules/translate', 'service "web" {\n policy = "write" # w\n intentions = "read"\n}');
  expect(aligned.text).toBe('service_prefix "web" {\n  policy     = "write" # w\n  intentions = "read"\n}');
  const broken = await a.as(MASTER, 'POST', '/v1/acl/rules/translate', 'key "" {');
  expect(broken.status).toBe(400);
  expect(broken.text).toMatch(/^Failed to parse rules: /);
  // acl:read is needed (anonymous has none under default deny).
  expect((await a.as(undefined, 'POST', '/v1/acl/rules/translate', 'key "" {}')).status).toBe(403);

  // Consul's api TestAPI_RulesTranslate_FromToken.
  const id = (await a.as(MASTER, 'PUT', '/v1/acl/create', { Name: 'API test', Type: 'client', Rules: 'key "" { policy = "deny" }' })).json.ID;
  const accessor = (await a.as(id, 'GET', '/v1/acl/token/self')).json.AccessorID;
  const fromToken = await a.as(MASTER, 'GET', `/v1/acl/rules/translate/${accessor}`);
  expect(fromToken.status).toBe(200);
  expect(fromToken.text).toBe('key_prefix "" {\n  policy = "deny"\n}');
  const masterAccessor = (await a.as(MASTER, 'GET', '/v1/acl/token/self')).json.AccessorID;
  expect(await a.as(MASTER, 'GET', `/v1/acl/rules/translate/${masterAccessor}`)).toMatchObject({ status: 400, text: 'The specified token does not have any rules set' });
  expect((await a.as(MASTER, 'GET', '/v1/acl/rules/translate/deadbeef-0000-4000-8000-000000000000')).status).toBe(403);
});

/** A python3 that can `import consul` (Debian's python3-consul), or why not (as clients/consul-compat-cluster.test.ts). */
function findPython(): { python?: string; reason: string } {
  const tried: string[] = [];
  for (const candidate of [process.env.PYTHON_CONSUL_PYTHON, 'python3', '/usr/bin/python3'].filter(Boolean) as string[]) {
    try {
      execFileSync(candidate, ['-c', 'import consul'], { stdio: ['ignore', 'pipe', 'pipe'] });
      return { python: candidate, reason: '' };
    } catch (err) {
      tried.push(`${candidate}: ${String((err as { stderr?: Buffer }).stderr ?? err).trim().split('\n').pop()}`);
    }
  }
  return { reason: `python-consul is not importable (${tried.join('; ')}); install Debian's python3-consul (.ci/run does)` };
}

const py = findPython();
const pyTest = py.python ? test : test.skip;
if (!py.python) console.log(`python3-consul legacy ACL test skipped: ${py.reason}`);

pyTest("python-consul's stock acl.create/info/list/update/clone/destroy", async () => {
  const port = new URL(a.url).port;
  const out = await new Promise<string>((resolve, reject) => {
    execFile(py.python!, [join(__dirname, 'python_consul_legacy_acl.py'), '127.0.0.1', port, MASTER], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
  expect(out.trim().split('\n')).toEqual(
    ['acl.create', 'acl.info', 'legacy token enforced', 'acl.list', 'acl.update', 'acl.clone', 'acl.create with an ID', 'acl.destroy'].map((s) => `ok ${s}`),
  );
});
