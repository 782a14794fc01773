// Agent checks with ACLs on: unknown checks are named as such (Consul), node checks need node:write
// on the agent's node, service checks need service:write, and /v1/agent/checks is filtered.
import { MASTER, startAclAgent, tokenWithRules, type AclAgent } from '../acl/acl-agent';

let a: AclAgent;
let web: string;
beforeAll(async () => {
  a = await startAclAgent({ defaultPolicy: 'deny' });
  web = (await tokenWithRules(a, 'web-writer', 'service "web" { policy = "write" }')).secret;
  expect((await a.as(MASTER, 'PUT', '/v1/agent/service/register', { Name: 'web' })).status).toBe(200);
  expect((await a.as(MASTER, 'PUT', '/v1/agent/check/register', { Name: 'node-ttl', TTL: '10m' })).status).toBe(200);
}, 30_000);
afterAll(() => a.stop());

test.each(['pass', 'warn', 'fail', 'deregister'])('%s of an unknown check is 400 Unknown check', async (verb) => {
  const r = await a.as(MASTER, 'PUT', `/v1/agent/check/${verb}/nope`);
  expect(r.status).toBe(400);
  expect(r.text).toBe('Unknown check "nope"');
});

test('a service:write token may register and pass a check on its service but not a node check', async () => {
  expect((await a.as(web, 'PUT', '/v1/agent/check/register', { Name: 'web-ttl', ServiceID: 'web', TTL: '10m' })).status).toBe(200);
  expect((await a.as(web, 'PUT', '/v1/agent/check/pass/web-ttl')).status).toBe(200);
  expect((await a.as(web, 'PUT', '/v1/agent/check/register', { Name: 'mine', TTL: '10m' })).status).toBe(403);
  expect((await a.as(web, 'PUT', '/v1/agent/check/pass/node-ttl')).status).toBe(403);
  // Overwriting a node check by ID through a service check still needs node:write.
  expect((await a.as(web, 'PUT', '/v1/agent/check/register', { ID: 'node-ttl', Name: 'x', ServiceID: 'web', TTL: '10m' })).status).toBe(403);
  expect(Object.keys((await a.as(web, 'GET', '/v1/agent/checks')).json)).toEqual(['web-ttl']);
  expect(Object.keys((await a.as(MASTER, 'GET', '/v1/agent/checks')).json)).toEqual(['node-ttl', 'web-ttl']);
  expect((await a.as(undefined, 'GET', '/v1/agent/checks')).json).toEqual({});
});
