// ACLs off (401 on every ACL route, nothing enforced), bootstrap-once without a configured
// management token, and where a request's token comes from (query > header > Bearer > agent default).
import { http } from '../support/dev-agent';
import { startDevAgent, type TestAgent } from '../support/dev-agent';
import { routeList } from '../../src/http/routes';
import { startAclAgent, tokenWithRules, type AclAgent } from './acl-agent';

const SOME_UUID = 'deadbeef-0000-4000-8000-000000000000';

/** A concrete URL for a route path: parameters filled, optional parts included. */
function concrete(path: string): string {
  return path.replace(/\{\/:([a-zA-Z]+)\}/g, `/${SOME_UUID}`).replace(/\{\/\*[a-zA-Z]+\}/g, '/k').replace(/:([a-zA-Z]+)/g, SOME_UUID);
}

describe('ACLs disabled', () => {
  let dev: TestAgent;
  beforeAll(async () => (dev = await startDevAgent()));
  afterAll(() => dev.stop());

  test('every /v1/acl route answers 401 ACL support disabled, whatever the body', async () => {
    const aclRoutes = routeList().filter((r) => r.path.startsWith('/v1/acl/'));
    expect(aclRoutes.length).toBe(20); // 12 of the 1.4 API (replication included), 8 of the legacy one (create, update, destroy, info, clone, list, 2 × rules/translate)
    for (const r of aclRoutes) {
      // Optional parameters both given and left out (PUT /v1/acl/token is create, /v1/acl/token/:id update).
      for (const path of new Set([concrete(r.path), r.path.replace(/\{[^}]*\}/g, '')])) {
        const res = await http(dev.url, r.method, path, r.method === 'PUT' ? '{not json' : undefined);
        expect([`${r.method} ${path}`, res.status, res.text]).toEqual([`${r.method} ${path}`, 401, 'ACL support disabled']);
      }
    }
  });

  test('nothing else is checked: any token works, even one no server knows', async () => {
    const r = await http(dev.url, 'PUT', '/v1/catalog/register', { Node: 'n1', Address: '10.0.0.1' }, { 'X-Registry-Token': SOME_UUID });
    expect(r.status).toBe(200);
    const nodes = await http(dev.url, 'GET', '/v1/catalog/nodes', undefined, { 'X-Registry-Token': SOME_UUID });
    expect(nodes.json.map((n: { Node: string }) => n.Node)).toContain('n1');
    // Deregistering what does not exist is fine with ACLs off.
    const d = await http(dev.url, 'PUT', '/v1/catalog/deregister', { Node: 'n1', ServiceID: 'nope' });
    expect(d.status).toBe(200);
  });
});

describe('bootstrap without a configured management token', () => {
  let a: AclAgent;
  beforeAll(async () => (a = await startAclAgent({ master: null, defaultPolicy: 'deny' })));
  afterAll(() => a.stop());

  test('the first call makes a management token (ID = SecretID); the second is 403 with the reset index', async () => {
    const first = await a.as(undefined, 'PUT', '/v1/acl/bootstrap');
    expect(first.status).toBe(200);
    expect(Object.keys(first.json)).toEqual(['ID', 'AccessorID', 'SecretID', 'Description', 'Policies', 'Local', 'CreateTime', 'Hash', 'CreateIndex', 'ModifyIndex']);
    expect(first.json.ID).toBe(first.json.SecretID);
    expect(first.json.SecretID).toHaveLength(36);
    expect(first.json).toMatchObject({
      Description: 'Bootstrap Token (Global Management)',
      Policies: [{ ID: '00000000-0000-0000-0000-000000000001', Name: 'global-management' }],
      Local: false,
    });
    const second = await a.as(undefined, 'PUT', '/v1/acl/bootstrap');
    expect([second.status, second.text]).toEqual([403, `Permission denied: ACL bootstrap no longer allowed (reset index: ${first.json.CreateIndex})`]);
    // The token manages everything.
    expect((await a.as(first.json.SecretID, 'GET', '/v1/acl/tokens')).status).toBe(200);
    expect((await a.as(first.json.SecretID, 'PUT', '/v1/catalog/register', { Node: 'x', Address: '1.2.3.4' })).status).toBe(200);
  });
});

describe('token sources and precedence', () => {
  let a: AclAgent;
  let nodeReader: string;
  let serviceReader: string;
  let defaultToken: string;

  beforeAll(async () => {
    // The agent's default token is set after start (it is read per request), once it exists.
    a = await startAclAgent({ defaultPolicy: 'deny' });
    nodeReader = (await tokenWithRules(a, 'nodes', 'node_prefix "" { policy = "read" }')).secret;
    serviceReader = (await tokenWithRules(a, 'services', 'service_prefix "" { policy = "read" }')).secret;
    defaultToken = (await tokenWithRules(a, 'agent-default', 'operator = "read"')).secret;
  });
  afterAll(() => a.stop());

  /** Which token a request was resolved with, told by what it may read. */
  async function who(path = '/v1/acl/token/self', headers: Record<string, string> = {}): Promise<string> {
    const r = await http(a.url, 'GET', path, undefined, headers);
    return r.status === 200 ? r.json.Description : `${r.status} ${r.text}`;
  }

  test('X-Registry-Token, Authorization: Bearer and ?token= each work', async () => {
    expect(await who('/v1/acl/token/self', { 'X-Registry-Token': nodeReader })).toBe('nodes');
    expect(await who('/v1/acl/token/self', { Authorization: `Bearer ${serviceReader}` })).toBe('services');
    expect(await who(`/v1/acl/token/self?token=${nodeReader}`)).toBe('nodes');
  });

  test('query beats header beats Bearer', async () => {
    const all = { 'X-Registry-Token': nodeReader, Authorization: `Bearer ${serviceReader}` };
    expect(await who(`/v1/acl/token/self?token=${defaultToken}`, all)).toBe('agent-default');
    expect(await who('/v1/acl/token/self', all)).toBe('nodes');
  });

  test('the agent default token applies only when the request names none; none at all is anonymous', async () => {
    expect(await who('/v1/acl/token/self')).toBe('403 ACL not found');
    a.agent.config.acl.tokens.default = defaultToken;
    try {
      expect(await who('/v1/acl/token/self')).toBe('agent-default');
      expect(await who('/v1/acl/token/self', { 'X-Registry-Token': serviceReader })).toBe('services');
      expect(await who('/v1/acl/token/self', { Authorization: `Bearer ${nodeReader}` })).toBe('nodes');
    } finally {
      a.agent.config.acl.tokens.default = undefined;
    }
    // Anonymous under default deny: no node is visible.
    expect((await http(a.url, 'GET', '/v1/catalog/nodes')).json).toEqual([]);
  });

  test('the token decides what a read shows', async () => {
    const names = async (headers: Record<string, string>) =>
      (await http(a.url, 'GET', '/v1/catalog/nodes', undefined, headers)).json.map((n: { Node: string }) => n.Node);
    expect(await names({ 'X-Registry-Token': nodeReader })).toEqual(['acl-agent']);
    expect(await names({ 'X-Registry-Token': serviceReader })).toEqual([]);
  });
});
