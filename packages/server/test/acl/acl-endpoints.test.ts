// Every /v1/acl endpoint over HTTP with ACLs on (consul-behaviour §2.2–2.6; DECISIONS: client
// errors are 400, unknown objects 403 `ACL not found`).
import { ANONYMOUS_TOKEN_ACCESSOR_ID, GLOBAL_MANAGEMENT_POLICY_ID, GLOBAL_MANAGEMENT_RULES } from '@registry/acl';
import { MASTER, startAclAgent, tokenWithRules, type AclAgent } from './acl-agent';

const RFC3339_FRACTION = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+(Z|[+-]\d\d:\d\d)$/;
const BASE64_32 = /^[A-Za-z0-9+/]{43}=$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = 'deadbeef-0000-4000-8000-000000000000';

let a: AclAgent;
let reader: string;

beforeAll(async () => {
  a = await startAclAgent();
  reader = (await tokenWithRules(a, 'acl-reader', 'acl = "read"')).secret;
});
afterAll(() => a.stop());

describe('built-ins and the initial management token', () => {
  test('global-management exists with its fixed rules; the list always holds it', async () => {
    const r = await a.as(MASTER, 'GET', `/v1/acl/policy/${GLOBAL_MANAGEMENT_POLICY_ID}`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ Name: 'global-management', Description: 'Builtin Policy that grants unlimited access', Rules: GLOBAL_MANAGEMENT_RULES });
    expect(r.json).not.toHaveProperty('Datacenters');
    const list = await a.as(MASTER, 'GET', '/v1/acl/policies');
    expect(list.json.map((p: { ID: string }) => p.ID)).toContain(GLOBAL_MANAGEMENT_POLICY_ID);
  });

  test('the anonymous token: secret "anonymous", null policies', async () => {
    const r = await a.as(MASTER, 'GET', `/v1/acl/token/${ANONYMOUS_TOKEN_ACCESSOR_ID}`);
    expect(r.json).toMatchObject({ SecretID: 'anonymous', Description: 'Anonymous Token', Policies: null, Local: false });
  });

  test('the configured initial management token is "Master Token" on global-management; ?policy= finds it', async () => {
    const self = await a.as(MASTER, 'GET', '/v1/acl/token/self');
    expect(self.json).toMatchObject({
      SecretID: MASTER,
      Description: 'Master Token',
      Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: 'global-management' }],
    });
    const byPolicy = await a.as(MASTER, 'GET', `/v1/acl/tokens?policy=${GLOBAL_MANAGEMENT_POLICY_ID}`);
    expect(byPolicy.json.map((t: { Description: string }) => t.Description)).toEqual(['Master Token']);
  });

  test('creating the master token used bootstrapping up', async () => {
    const r = await a.as(undefined, 'PUT', '/v1/acl/bootstrap');
    expect(r.status).toBe(403);
    expect(r.text).toMatch(/^Permission denied: ACL bootstrap no longer allowed \(reset index: \d+\)$/);
  });
});

describe('policies', () => {
  test('create → read → update → delete, with Hash, indexes and true', async () => {
    const c = await a.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'node-read_1', Description: 'd', Rules: 'node_prefix "" { policy = "read" }', Datacenters: ['dc1'] });
    expect(c.status).toBe(200);
    expect(c.json.ID).toMatch(UUID);
    expect(c.json.Hash).toMatch(BASE64_32);
    expect(c.json.CreateIndex).toBe(c.json.ModifyIndex);
    const read = await a.as(reader, 'GET', `/v1/acl/policy/${c.json.ID}`);
    expect(read.json).toEqual(c.json);
    expect(Number(read.headers.get('x-registry-index'))).toBeGreaterThanOrEqual(c.json.ModifyIndex);

    const u = await a.as(MASTER, 'PUT', `/v1/acl/policy/${c.json.ID}`, { ID: c.json.ID, Name: 'node-read-2', Rules: '' });
    expect(u.status).toBe(200);
    expect(u.json.Hash).not.toBe(c.json.Hash);
    expect(u.json.CreateIndex).toBe(c.json.CreateIndex);
    expect(u.json.ModifyIndex).toBeGreaterThan(c.json.ModifyIndex);
    expect(u.json).not.toHaveProperty('Datacenters');

    const d = await a.as(MASTER, 'DELETE', `/v1/acl/policy/${c.json.ID}`);
    expect([d.status, d.json]).toEqual([200, true]);
    expect((await a.as(MASTER, 'DELETE', `/v1/acl/policy/${c.json.ID}`)).json).toBe(true);
    const gone = await a.as(MASTER, 'GET', `/v1/acl/policy/${c.json.ID}`);
    expect([gone.status, gone.text]).toEqual([403, 'ACL not found']);
  });

  test('the list has no Rules and Datacenters null when unrestricted', async () => {
    const list = await a.as(reader, 'GET', '/v1/acl/policies');
    expect(list.status).toBe(200);
    for (const p of list.json) expect(p).not.toHaveProperty('Rules');
    expect(list.json.find((p: { ID: string }) => p.ID === GLOBAL_MANAGEMENT_POLICY_ID).Datacenters).toBeNull();
  });

  test.each([
    ['create with an ID in the body', 'PUT', '/v1/acl/policy', { ID: MISSING, Name: 'x' }, 'Policy ID in URL and payload do not match'],
    ['update with a different body ID', 'PUT', `/v1/acl/policy/${MISSING}`, { ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: 'x' }, 'Policy ID in URL and payload do not match'],
    ['a missing ID on GET', 'GET', '/v1/acl/policy/', undefined, 'Missing policy ID'],
    ['a missing ID on DELETE', 'DELETE', '/v1/acl/policy/', undefined, 'Missing policy ID'],
    ['a non-UUID on GET', 'GET', '/v1/acl/policy/nope', undefined, 'failed acl policy lookup: UUID must be 36 characters'],
    ['a non-UUID update', 'PUT', '/v1/acl/policy/nope', { Name: 'x' }, 'Policy ID invalid UUID'],
    ['an unknown ID on update', 'PUT', `/v1/acl/policy/${MISSING}`, { Name: 'x' }, `cannot find policy ${MISSING}`],
    ['no name', 'PUT', '/v1/acl/policy', { Rules: '' }, 'Invalid Policy: no Name is set'],
    ['a bad name', 'PUT', '/v1/acl/policy', { Name: 'a.b' }, "Invalid Policy: invalid Name. Only alphanumeric characters, '-' and '_' are allowed"],
    ['a taken name', 'PUT', '/v1/acl/policy', { Name: 'GLOBAL-management' }, 'Invalid Policy: A Policy with Name "GLOBAL-management" already exists'],
    ['unparsable rules', 'PUT', '/v1/acl/policy', { Name: 'bad', Rules: 'key "a" {' }, 'Failed to parse ACL rules'],
    ['a bad disposition', 'PUT', '/v1/acl/policy', { Name: 'bad', Rules: 'service "a" { policy = "list" }' }, 'Invalid service policy'],
    ['a body that is not JSON', 'PUT', '/v1/acl/policy', '{', 'Policy decoding failed'],
    ['a wrongly typed field', 'PUT', '/v1/acl/policy', { Name: 1 }, 'Policy decoding failed'],
  ])('400 for %s', async (_what, method, path, body, message) => {
    const r = await a.as(MASTER, method, path, body);
    expect(r.status).toBe(400);
    expect(r.text).toContain(message);
  });

  test('global-management: rules, datacenters and delete refused; a rename is fine', async () => {
    const path = `/v1/acl/policy/${GLOBAL_MANAGEMENT_POLICY_ID}`;
    const rules = await a.as(MASTER, 'PUT', path, { Name: 'global-management', Rules: 'acl = "read"' });
    expect([rules.status, rules.text]).toEqual([400, 'Changing the Rules for the builtin global-management policy is not permitted']);
    const dcs = await a.as(MASTER, 'PUT', path, { Name: 'global-management', Rules: GLOBAL_MANAGEMENT_RULES, Datacenters: ['dc9'] });
    expect(dcs.text).toBe('Changing the Datacenters of the builtin global-management policy is not permitted');
    const del = await a.as(MASTER, 'DELETE', path);
    expect([del.status, del.text]).toEqual([400, 'Delete operation not permitted on the builtin global-management policy']);
    const renamed = await a.as(MASTER, 'PUT', path, { Name: 'gm', Rules: GLOBAL_MANAGEMENT_RULES });
    expect([renamed.status, renamed.json.Name]).toEqual([200, 'gm']);
    // Tokens show the new name.
    expect((await a.as(MASTER, 'GET', '/v1/acl/token/self')).json.Policies[0].Name).toBe('gm');
    await a.as(MASTER, 'PUT', path, { Name: 'global-management', Rules: GLOBAL_MANAGEMENT_RULES });
  });

  test('reads need acl:read and writes acl:write (403 Permission denied)', async () => {
    expect((await a.as('anonymous', 'GET', '/v1/acl/policies')).status).toBe(403);
    expect((await a.as('anonymous', 'GET', `/v1/acl/policy/${GLOBAL_MANAGEMENT_POLICY_ID}`)).status).toBe(403);
    const w = await a.as(reader, 'PUT', '/v1/acl/policy', { Name: 'by-reader' });
    expect([w.status, w.text]).toEqual([403, 'Permission denied']);
    expect((await a.as(reader, 'DELETE', `/v1/acl/policy/${MISSING}`)).status).toBe(403);
  });
});

describe('tokens', () => {
  test('create: generated identifiers, links by name answered with ID and Name, Hash and CreateTime shapes', async () => {
    const p = await a.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'tok-link' });
    const r = await a.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'x', Policies: [{ Name: 'tok-link' }, { ID: p.json.ID }], SecretID: 'ignored' });
    expect(r.status).toBe(200);
    expect(r.json.AccessorID).toMatch(UUID);
    expect(r.json.SecretID).toMatch(UUID);
    expect(r.json.Policies).toEqual([{ ID: p.json.ID, Name: 'tok-link' }]);
    expect(r.json.CreateTime).toMatch(RFC3339_FRACTION);
    expect(r.json.Hash).toMatch(BASE64_32);
    expect(r.json.Local).toBe(false);
    expect(Object.keys(r.json)).toEqual(['AccessorID', 'SecretID', 'Description', 'Policies', 'Local', 'CreateTime', 'Hash', 'CreateIndex', 'ModifyIndex']);
  });

  test('read: SecretID in full with acl:write, <hidden> with acl:read only; self always shows it', async () => {
    const t = await a.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'redact-me' });
    const full = await a.as(MASTER, 'GET', `/v1/acl/token/${t.json.AccessorID}`);
    expect(full.json.SecretID).toBe(t.json.SecretID);
    const hidden = await a.as(reader, 'GET', `/v1/acl/token/${t.json.AccessorID}`);
    expect(hidden.status).toBe(200);
    expect(hidden.json.SecretID).toBe('<hidden>');
    const self = await a.as(t.json.SecretID, 'GET', '/v1/acl/token/self');
    expect(self.json.SecretID).toBe(t.json.SecretID);
    expect((await a.as('anonymous', 'GET', `/v1/acl/token/${t.json.AccessorID}`)).status).toBe(403);
  });

  test('self: no token or an unknown one is 403 ACL not found', async () => {
    expect((await a.as(undefined, 'GET', '/v1/acl/token/self')).text).toBe('ACL not found');
    expect((await a.as(MISSING, 'GET', '/v1/acl/token/self')).text).toBe('ACL not found');
  });

  test('update keeps AccessorID, SecretID, CreateTime and CreateIndex; changes Hash', async () => {
    const t = (await a.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'before' })).json;
    const u = await a.as(MASTER, 'PUT', `/v1/acl/token/${t.AccessorID}`, { Description: 'after', Policies: [{ Name: 'global-management' }] });
    expect(u.status).toBe(200);
    expect(u.json).toMatchObject({ AccessorID: t.AccessorID, SecretID: t.SecretID, CreateTime: t.CreateTime, CreateIndex: t.CreateIndex, Description: 'after' });
    expect(u.json.Hash).not.toBe(t.Hash);
    expect(u.json.ModifyIndex).toBeGreaterThan(t.ModifyIndex);
    // With the AccessorID and the same SecretID in the body too.
    const same = await a.as(MASTER, 'PUT', `/v1/acl/token/${t.AccessorID}`, { AccessorID: t.AccessorID, SecretID: t.SecretID, Description: 'again' });
    expect(same.status).toBe(200);
  });

  test.each([
    ['create with an AccessorID in the body', 'PUT', '/v1/acl/token', { AccessorID: MISSING }, 'Token Accessor ID in URL and payload do not match'],
    ['legacy Rules', 'PUT', '/v1/acl/token', { Rules: 'key "" { policy = "read" }' }, 'Rules cannot be specified for this token'],
    ['a Type', 'PUT', '/v1/acl/token', { Type: 'management' }, 'Type cannot be specified for this token'],
    ['an unknown policy name', 'PUT', '/v1/acl/token', { Policies: [{ Name: 'nope' }] }, 'No such ACL policy with name "nope"'],
    ['an unknown policy ID', 'PUT', '/v1/acl/token', { Policies: [{ ID: MISSING }] }, `No such policy with ID: ${MISSING}`],
    ['no body', 'PUT', '/v1/acl/token', undefined, 'Token decoding failed: EOF'],
    ['a missing accessor on GET', 'GET', '/v1/acl/token/', undefined, 'Missing token ID'],
    ['a missing accessor on DELETE', 'DELETE', '/v1/acl/token/', undefined, 'Missing token ID'],
    ['a non-UUID on GET', 'GET', '/v1/acl/token/xyz', undefined, 'UUID must be 36 characters'],
    ['a non-UUID update', 'PUT', '/v1/acl/token/xyz', {}, 'AccessorID is not a valid UUID'],
    ['a non-UUID delete', 'DELETE', '/v1/acl/token/xyz', undefined, 'Accessor ID is missing or an invalid UUID'],
    ['an unknown accessor on update', 'PUT', `/v1/acl/token/${MISSING}`, {}, `Cannot find token "${MISSING}"`],
    ['an accessor mismatch on update', 'PUT', `/v1/acl/token/${MISSING}`, { AccessorID: ANONYMOUS_TOKEN_ACCESSOR_ID }, 'Token Accessor ID in URL and payload do not match'],
  ])('400 for %s', async (_what, method, path, body, message) => {
    const r = await a.as(MASTER, method, path, body);
    expect(r.status).toBe(400);
    expect(r.text).toContain(message);
  });

  test('update refuses a SecretID change and a Local toggle', async () => {
    const t = (await a.as(MASTER, 'PUT', '/v1/acl/token', {})).json;
    const secret = await a.as(MASTER, 'PUT', `/v1/acl/token/${t.AccessorID}`, { SecretID: MISSING });
    expect([secret.status, secret.text]).toEqual([400, 'Changing a tokens SecretID is not permitted']);
    const local = await a.as(MASTER, 'PUT', `/v1/acl/token/${t.AccessorID}`, { Local: true });
    expect([local.status, local.text]).toEqual([400, `cannot toggle local mode of ${t.AccessorID}`]);
  });

  test('clone: new identifiers, same policies and Local, description copied or given; unknown → 403', async () => {
    const src = (await a.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'src', Policies: [{ Name: 'acl-reader' }] })).json;
    const c1 = await a.as(MASTER, 'PUT', `/v1/acl/token/${src.AccessorID}/clone`);
    expect(c1.status).toBe(200);
    expect(c1.json.AccessorID).not.toBe(src.AccessorID);
    expect(c1.json.SecretID).not.toBe(src.SecretID);
    expect(c1.json).toMatchObject({ Description: 'src', Policies: src.Policies, Local: false });
    expect(c1.json.CreateIndex).toBeGreaterThan(src.CreateIndex);
    const c2 = await a.as(MASTER, 'PUT', `/v1/acl/token/${src.AccessorID}/clone`, { Description: 'copy' });
    expect(c2.json.Description).toBe('copy');
    const unknown = await a.as(MASTER, 'PUT', `/v1/acl/token/${MISSING}/clone`, {});
    expect([unknown.status, unknown.text]).toEqual([403, 'ACL not found']);
    expect((await a.as(reader, 'PUT', `/v1/acl/token/${src.AccessorID}/clone`)).status).toBe(403);
  });

  test('delete: true for known and unknown; the anonymous token and the caller\'s own token are refused', async () => {
    const t = (await a.as(MASTER, 'PUT', '/v1/acl/token', { Policies: [{ Name: 'global-management' }] })).json;
    const own = await a.as(t.SecretID, 'DELETE', `/v1/acl/token/${t.AccessorID}`);
    expect([own.status, own.text]).toEqual([400, "Deletion of the request's authorization token is not permitted"]);
    const d = await a.as(MASTER, 'DELETE', `/v1/acl/token/${t.AccessorID}`);
    expect([d.status, d.json]).toEqual([200, true]);
    expect((await a.as(MASTER, 'DELETE', `/v1/acl/token/${MISSING}`)).json).toBe(true);
    const anon = await a.as(MASTER, 'DELETE', `/v1/acl/token/${ANONYMOUS_TOKEN_ACCESSOR_ID}`);
    expect([anon.status, anon.text]).toEqual([400, 'Delete operation not permitted on the anonymous token']);
    // The deleted secret no longer resolves: 403 ACL not found on any request.
    const after = await a.as(t.SecretID, 'GET', '/v1/catalog/nodes');
    expect([after.status, after.text]).toEqual([403, 'ACL not found']);
  });

  test('list: no SecretID, acl:read needed, ?policy= filters', async () => {
    const { policyId, accessor } = await tokenWithRules(a, 'list-filter', 'operator = "read"');
    const list = await a.as(reader, 'GET', '/v1/acl/tokens');
    expect(list.status).toBe(200);
    for (const t of list.json) expect(t).not.toHaveProperty('SecretID');
    expect(list.json.map((t: { AccessorID: string }) => t.AccessorID)).toEqual(expect.arrayContaining([ANONYMOUS_TOKEN_ACCESSOR_ID, accessor]));
    const filtered = await a.as(reader, 'GET', `/v1/acl/tokens?policy=${policyId}`);
    expect(filtered.json.map((t: { AccessorID: string }) => t.AccessorID)).toEqual([accessor]);
    expect((await a.as('anonymous', 'GET', '/v1/acl/tokens')).status).toBe(403);
  });

  test('a link to a deleted policy disappears from reads; the token stops getting its rights', async () => {
    const { secret, accessor, policyId } = await tokenWithRules(a, 'short-lived', 'acl = "read"');
    expect((await a.as(secret, 'GET', '/v1/acl/policies')).status).toBe(200);
    await a.as(MASTER, 'DELETE', `/v1/acl/policy/${policyId}`);
    const t = await a.as(MASTER, 'GET', `/v1/acl/token/${accessor}`);
    expect(t.json.Policies).toEqual([]);
    expect((await a.as(secret, 'GET', '/v1/acl/policies')).status).toBe(403);
  });

  test('a policy change takes effect at once for tokens already used (the resolver cache is dropped)', async () => {
    const { secret, policyId } = await tokenWithRules(a, 'changing', 'acl = "read"');
    expect((await a.as(secret, 'GET', '/v1/acl/tokens')).status).toBe(200);
    await a.as(MASTER, 'PUT', `/v1/acl/policy/${policyId}`, { Name: 'changing', Rules: 'acl = "deny"' });
    expect((await a.as(secret, 'GET', '/v1/acl/tokens')).status).toBe(403);
  });

  test('a policy limited to another datacenter grants nothing here', async () => {
    const p = await a.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'elsewhere', Rules: 'acl = "read"', Datacenters: ['dc2'] });
    const t = await a.as(MASTER, 'PUT', '/v1/acl/token', { Policies: [{ ID: p.json.ID }] });
    expect((await a.as(t.json.SecretID, 'GET', '/v1/acl/policies')).status).toBe(403);
  });

  test('a blocking token read wakes on a token change', async () => {
    const first = await a.as(reader, 'GET', '/v1/acl/tokens');
    const index = Number(first.headers.get('x-registry-index'));
    const blocked = a.as(reader, 'GET', `/v1/acl/tokens?index=${index}&wait=5s`);
    const started = Date.now();
    await new Promise((r) => setTimeout(r, 100));
    await a.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'wake' });
    const woke = await blocked;
    expect(Date.now() - started).toBeLessThan(4000);
    expect(Number(woke.headers.get('x-registry-index'))).toBeGreaterThan(index);
  });
});

describe('root secrets', () => {
  test.each(['allow', 'deny', 'manage'])('%s → 500 Cannot resolve root ACL', async (secret) => {
    const r = await a.as(secret, 'GET', '/v1/catalog/nodes');
    expect([r.status, r.text]).toEqual([500, 'Cannot resolve root ACL']);
  });
});
