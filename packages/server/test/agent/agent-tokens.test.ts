// PUT /v1/agent/token/:kind on an in-process agent with ACLs on (default deny): agent:write is
// required, an unknown kind is 404, the default token takes effect at once for anonymous requests,
// and with acl.enable_token_persistence it survives a restart (same data dir).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MASTER, startAclAgent, tokenWithRules, type AclAgent } from '../acl/acl-agent';
import { freePort } from '../support/processes';

jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'agent-tokens-'));
let a: AclAgent | undefined;
afterEach(async () => {
  await a?.stop();
  a = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function start(serverPort: number, persist = true): Promise<AclAgent> {
  return startAclAgent({
    defaultPolicy: 'deny',
    patch: (c) => {
      c.dataDir = join(dir, persist ? 'persist' : 'volatile');
      c.serverPort = serverPort;
      c.acl.enableTokenPersistence = persist;
    },
  });
}

test('agent:write is needed, unknown kinds are 404, and a new default token acts for anonymous callers at once; persisted, it survives a restart', async () => {
  const port = await freePort();
  a = await start(port);
  const reader = (await tokenWithRules(a, 'agent-reader', 'agent_prefix "" { policy = "read" }\nnode_prefix "" { policy = "read" }')).secret;

  // Anonymous (default deny) cannot read the agent.
  expect((await a.as(undefined, 'GET', '/v1/agent/self')).status).toBe(403);
  // Setting a token needs agent:write: a reader is refused, and nothing changes.
  expect((await a.as(reader, 'PUT', '/v1/agent/token/default', { Token: reader })).status).toBe(403);
  expect((await a.as(undefined, 'GET', '/v1/agent/self')).status).toBe(403);

  const unknown = await a.as(MASTER, 'PUT', '/v1/agent/token/root', { Token: reader });
  expect(unknown.status).toBe(404);
  expect(unknown.text).toBe('Token "root" is unknown');
  expect((await a.as(MASTER, 'PUT', '/v1/agent/token/default', { Token: 7 })).status).toBe(400);

  // The legacy name sets the same token; the next anonymous request acts with it.
  expect((await a.as(MASTER, 'PUT', '/v1/agent/token/acl_token', { Token: reader })).status).toBe(200);
  const self = await a.as(undefined, 'GET', '/v1/agent/self');
  expect(self.status).toBe(200);
  expect(self.json.DebugConfig.ACLToken).toBe('hidden');
  expect(self.json.DebugConfig.ACLMasterToken).toBe('hidden');
  for (const kind of ['agent', 'acl_agent_master_token', 'replication']) {
    expect((await a.as(MASTER, 'PUT', `/v1/agent/token/${kind}`, { Token: `${kind}-secret-value` })).status).toBe(200);
  }
  expect((await a.as(undefined, 'GET', '/v1/agent/self')).json.DebugConfig).toMatchObject({ ACLAgentToken: 'hidden', ACLAgentMasterToken: 'hidden', ACLReplicationToken: 'hidden' });
  // On disk with Consul's keys.
  expect(JSON.parse(readFileSync(join(dir, 'persist', 'acl-tokens.json'), 'utf8'))).toEqual({
    default: reader,
    agent: 'agent-secret-value',
    agent_master: 'acl_agent_master_token-secret-value',
    replication: 'replication-secret-value',
  });

  await a.stop();
  a = await start(port);
  expect((await a.as(undefined, 'GET', '/v1/agent/self')).status).toBe(200);
});

test('without persistence a set token is gone after a restart', async () => {
  const port = await freePort();
  a = await start(port, false);
  const reader = (await tokenWithRules(a, 'agent-reader-2', 'agent_prefix "" { policy = "read" }')).secret;
  expect((await a.as(MASTER, 'PUT', '/v1/agent/token/default', { Token: reader })).status).toBe(200);
  expect((await a.as(undefined, 'GET', '/v1/agent/self')).status).toBe(200);
  await a.stop();
  a = await start(port, false);
  expect((await a.as(undefined, 'GET', '/v1/agent/self')).status).toBe(403);
});
