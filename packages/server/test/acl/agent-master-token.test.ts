// The agent master token (Consul's acl.tokens.agent_master): resolved by the agent itself to
// agent:write on this agent's node and node:read, nothing more, whatever the default policy; a
// new one set through PUT /v1/agent/token/agent_master replaces it at once.
import { MASTER, startAclAgent, type AclAgent } from './acl-agent';

jest.setTimeout(60_000);

const AGENT_MASTER = 'agent-master-secret-1';
let a: AclAgent;
beforeAll(async () => {
  a = await startAclAgent({
    defaultPolicy: 'allow',
    patch: (c) => {
      c.acl.tokens.agentMaster = AGENT_MASTER;
    },
  });
  // Default allow: anonymous may write KV here, so a refusal below is the agent master's own deny.
  expect((await a.as(undefined, 'PUT', '/v1/kv/k', 'v')).status).toBe(200);
});
afterAll(() => a.stop());

test('the agent master token grants agent:write and agent:read on this agent', async () => {
  expect((await a.as(AGENT_MASTER, 'GET', '/v1/agent/self')).status).toBe(200);
  const set = await a.as(AGENT_MASTER, 'PUT', '/v1/agent/token/agent', { Token: 'some-agent-token' });
  expect(set.status).toBe(200);
  expect((await a.as(AGENT_MASTER, 'GET', '/v1/agent/members')).status).toBe(200);
});

test('it reads nodes but nothing else, even under default allow: its parent policy is deny', async () => {
  const nodes = await a.as(AGENT_MASTER, 'GET', '/v1/catalog/nodes');
  expect(nodes.status).toBe(200);
  expect(nodes.json.map((n: { Node: string }) => n.Node)).toContain('acl-agent');
  expect((await a.as(AGENT_MASTER, 'PUT', '/v1/kv/k', 'v')).status).toBe(403);
  expect((await a.as(AGENT_MASTER, 'GET', '/v1/catalog/services')).json).toEqual({});
  expect((await a.as(AGENT_MASTER, 'PUT', '/v1/catalog/register', { Node: 'n1', Address: '10.0.0.1' })).status).toBe(403);
  expect((await a.as(AGENT_MASTER, 'PUT', '/v1/agent/maintenance?enable=true')).status).toBe(403);
  // It is the agent's own, not a token the servers know.
  const self = await a.as(AGENT_MASTER, 'GET', '/v1/acl/token/self');
  expect(self.status).toBe(403);
  expect(self.text).toMatch(/ACL not found/);
});

test('a new agent master token set at run time takes over at once', async () => {
  const next = 'agent-master-secret-2';
  expect((await a.as(MASTER, 'PUT', '/v1/agent/token/agent_master', { Token: next })).status).toBe(200);
  expect((await a.as(next, 'PUT', '/v1/agent/token/agent', { Token: 'x' })).status).toBe(200);
  // The old one is no longer anything: an unknown token.
  const old = await a.as(AGENT_MASTER, 'GET', '/v1/agent/self');
  expect(old.status).toBe(403);
  expect(old.text).toMatch(/ACL not found/);
});
