// ACLs on client agents: three real ACL-enabled servers (default deny, a master token) and a
// client agent that resolves tokens by asking them (acl/cached-resolver.ts, a short token_ttl
// here), checks its agent endpoints locally, forwards everything else with the token, and makes
// its own writes with its agent token. A forged `internal` write over the RPC port is refused, and
// so is a forged leader call (`client.call`) whose token may not make it.
// The last test stops every server: the client then answers from its cache (extend-cache).
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TcpTransport } from '@registry/raft';
import { eventually, sleep } from '../support/wait';
import { ClusterHarness, type HttpAnswer } from '../cluster/support/cluster-harness';
import type { ClientAgents } from '../cluster/support/client-agents';
import { startAclCluster, startJoinedClient, stopAclCluster } from './acl-cluster';

jest.setTimeout(240_000);

const MASTER = 'b1c2d3e4-0000-4000-8000-00000000aaaa';
const TOKEN_TTL_MS = 2_000;
const serverConfig = join(tmpdir(), `registry-acl-clients-${process.pid}.json`);
let cluster: ClusterHarness;
let clients: ClientAgents;
let leader = 0;
/** Secrets of the tokens made in beforeAll. */
const secret: Record<'agent' | 'kvReader' | 'webWriter' | 'agentReader', string> = { agent: '', kvReader: '', webWriter: '', agentReader: '' };
let agentPolicyId = '';
let agentReaderPolicyId = '';

const master = (method: string, path: string, body?: unknown): Promise<HttpAnswer> =>
  cluster.http(leader, method, path, body, { headers: { 'X-Registry-Token': MASTER }, timeoutMs: 10_000 });

async function policy(name: string, rules: string): Promise<string> {
  const r = await master('PUT', '/v1/acl/policy', { Name: name, Rules: rules });
  if (r.status !== 200) throw new Error(`policy ${name}: ${r.status} ${r.body}`);
  return r.json<{ ID: string }>().ID;
}

async function token(policyId: string): Promise<{ AccessorID: string; SecretID: string }> {
  const r = await master('PUT', '/v1/acl/token', { Policies: [{ ID: policyId }] });
  if (r.status !== 200) throw new Error(`token: ${r.status} ${r.body}`);
  return r.json();
}

/** Through the client agent, with `?token=` when given. */
function viaClient(method: string, path: string, tok?: string, body?: unknown, timeoutMs = 20_000): Promise<HttpAnswer> {
  const sep = path.includes('?') ? '&' : '?';
  return clients.http(0, method, tok === undefined ? path : `${path}${sep}token=${encodeURIComponent(tok)}`, body, timeoutMs);
}

async function catalogServices(node: string): Promise<string[]> {
  const r = await master('GET', `/v1/catalog/node/${node}`);
  const n = r.json<{ Services: Record<string, unknown> } | null>();
  return Object.keys(n?.Services ?? {});
}

beforeAll(async () => {
  ({ cluster, leader } = await startAclCluster(serverConfig, MASTER));

  agentPolicyId = await policy('client-agent', 'node_prefix "" { policy = "write" }\nservice_prefix "" { policy = "write" }');
  secret.agent = (await token(agentPolicyId)).SecretID;
  secret.kvReader = (await token(await policy('kv-reader', 'key_prefix "app/" { policy = "read" }'))).SecretID;
  secret.webWriter = (await token(await policy('web-writer', 'service "web" { policy = "write" }\nkey_prefix "app/" { policy = "write" }'))).SecretID;
  agentReaderPolicyId = await policy('agent-reader', 'agent_prefix "" { policy = "read" }');
  secret.agentReader = (await token(agentReaderPolicyId)).SecretID;

  clients = await startJoinedClient(cluster, leader, MASTER, cluster.servers.map((s) => s.serverAddress), {
    acl: { enabled: true, default_policy: 'deny', down_policy: 'extend-cache', token_ttl: `${TOKEN_TTL_MS}ms`, tokens: { agent: secret.agent } },
    anti_entropy_interval: '1s',
  });
});

afterAll(() => stopAclCluster(clients, cluster, serverConfig));

test('agent endpoints on the client: anonymous and insufficient tokens get 403, an unknown one "ACL not found", a token with agent:read 200', async () => {
  const anonymous = await viaClient('GET', '/v1/agent/self');
  expect(anonymous.status).toBe(403);
  expect((await viaClient('GET', '/v1/agent/self', secret.kvReader)).status).toBe(403);
  const unknown = await viaClient('GET', '/v1/agent/self', '00000000-1111-4222-8333-444444444444');
  expect(unknown.status).toBe(403);
  expect(unknown.body).toContain('ACL not found');
  const ok = await viaClient('GET', '/v1/agent/self', secret.agentReader);
  expect(ok.status).toBe(200);
  expect(ok.json<{ Config: { Server: boolean } }>().Config.Server).toBe(false);
  expect((await viaClient('GET', '/v1/agent/self', MASTER)).status).toBe(200);
  // Registering a service needs service:write on it, checked on the client before anything is written.
  expect((await viaClient('PUT', '/v1/agent/service/register', secret.kvReader, { Name: 'web', Port: 80 })).status).toBe(403);
  expect(await catalogServices('c0')).toEqual([]);
});

test('forwarded requests carry the token to the servers: KV writes and reads are checked there', async () => {
  expect((await viaClient('PUT', '/v1/kv/app/config', undefined, 'v0')).status).toBe(403);
  expect((await viaClient('PUT', '/v1/kv/app/config', secret.kvReader, 'v1')).status).toBe(403);
  const written = await viaClient('PUT', '/v1/kv/app/config', secret.webWriter, 'v2');
  expect(written.status).toBe(200);
  expect(written.body).toBe('true');
  const read = await viaClient('GET', '/v1/kv/app/config?raw', secret.kvReader);
  expect(read.status).toBe(200);
  expect(read.body).toBe('v2');
  expect((await viaClient('GET', '/v1/kv/app/config?raw')).status).toBe(403);
  expect((await viaClient('GET', '/v1/kv/app/config?raw', '00000000-1111-4222-8333-444444444444')).status).toBe(403);
});

test('a token deleted on the servers stops working through the client within token_ttl', async () => {
  const t = await token(await policy('short-lived', 'agent_prefix "" { policy = "read" }'));
  expect((await viaClient('GET', '/v1/agent/self', t.SecretID)).status).toBe(200);
  expect((await master('DELETE', `/v1/acl/token/${t.AccessorID}`)).status).toBe(200);
  // The client may answer from its cache until the TTL ends; well before three TTLs it must ask again.
  let last: HttpAnswer | undefined;
  const refused = await eventually(async () => {
    last = await viaClient('GET', '/v1/agent/self', t.SecretID);
    return last.status === 403;
  }, TOKEN_TTL_MS * 3 + 5_000, 250);
  expect(refused).toBe(true);
  expect(last?.body).toContain('ACL not found');
});

test('a service registered on the client reaches the catalog with the agent token, and anti-entropy repairs it', async () => {
  const r = await viaClient('PUT', '/v1/agent/service/register', secret.webWriter, { Name: 'web', Port: 80 });
  expect(r.status).toBe(200);
  expect(await eventually(async () => (await catalogServices('c0')).includes('web'), 10_000, 200)).toBe(true);
  // Removed behind the agent's back: its next pass writes it again.
  expect((await master('PUT', '/v1/catalog/deregister', { Node: 'c0', ServiceID: 'web' })).body).toBe('true');
  expect(await eventually(async () => (await catalogServices('c0')).includes('web'), 15_000, 250)).toBe(true);
  // The agent endpoint answers by the caller's token: web is listed only for a token that may read it.
  expect(Object.keys((await viaClient('GET', '/v1/agent/services', secret.webWriter)).json<object>())).toEqual(['web']);
  expect((await viaClient('GET', '/v1/agent/services', secret.kvReader)).json<object>()).toEqual({});
});

test('an agent token without rights: anti-entropy logs the refusal and goes on; rights restored, it repairs', async () => {
  type Self = { Stats: { antiEntropy: { passes: number; blocked: number } } };
  const stats = async () => (await viaClient('GET', '/v1/agent/self', MASTER)).json<Self>().Stats.antiEntropy;
  // The agent token keeps node rights (its node's rows stay readable) but loses service:write.
  const narrowed = await master('PUT', `/v1/acl/policy/${agentPolicyId}`, { Name: 'client-agent', Rules: 'node_prefix "" { policy = "write" }\nservice_prefix "" { policy = "read" }' });
  expect(narrowed.status).toBe(200);
  expect((await master('PUT', '/v1/catalog/deregister', { Node: 'c0', ServiceID: 'web' })).body).toBe('true');
  const before = await stats();
  expect(await eventually(async () => (await stats()).blocked > before.blocked, 15_000, 250)).toBe(true);
  // Still running and passing, at its interval: no crash, no spinning.
  const a = await stats();
  await sleep(3_000);
  const b = await stats();
  expect(b.passes).toBeGreaterThan(a.passes);
  expect(b.passes - a.passes).toBeLessThan(10); // 1 s interval: ~3 passes, never a tight loop
  expect(clients.logs(0)).toContain('the servers refused the agent token');
  expect(await catalogServices('c0')).toEqual([]);

  const restored = await master('PUT', `/v1/acl/policy/${agentPolicyId}`, { Name: 'client-agent', Rules: 'node_prefix "" { policy = "write" }\nservice_prefix "" { policy = "write" }' });
  expect(restored.status).toBe(200);
  expect(await eventually(async () => (await catalogServices('c0')).includes('web'), 15_000, 250)).toBe(true);
});

test('the RPC port: a forged `internal` client.apply is refused by an ACL-enabled server; the same write with a token that may is applied', async () => {
  const transport = await TcpTransport.listen({ host: '127.0.0.1', port: 0 });
  try {
    const server = cluster.servers[leader]!.serverAddress;
    const forged = (await transport.call(server, 'client.apply', {
      cmd: { type: 'catalog.register', req: { Node: 'forged', Address: '10.9.9.9' } },
      token: undefined,
      internal: true,
      requestId: `forged-${process.pid}-1`,
    }, 10_000)) as { ok: boolean; kind?: string };
    expect(forged.ok).toBe(false);
    expect(forged.kind).toBe('PermissionDenied');
    expect((await master('GET', '/v1/catalog/node/forged')).json<unknown>()).toBeNull();

    // The control: the door itself works, only the claim was refused.
    const allowed = (await transport.call(server, 'client.apply', {
      cmd: { type: 'catalog.register', req: { Node: 'forged', Address: '10.9.9.9' } },
      token: MASTER,
      internal: true,
      requestId: `forged-${process.pid}-2`,
    }, 10_000)) as { ok: boolean };
    expect(allowed.ok).toBe(true);
    expect((await master('GET', '/v1/catalog/node/forged')).json<{ Node: { Address: string } }>().Node.Address).toBe('10.9.9.9');
  } finally {
    await transport.close();
  }
});

/** A leader call as a client agent forwards it (client/forwarding-rpc.ts), sent by hand to `server`. */
async function forgedCall(transport: TcpTransport, server: string, method: string, args: unknown, tok: string | undefined) {
  return (await transport.call(server, 'client.call', { method, args, token: tok }, 15_000)) as
    { ok: true; value: unknown } | { ok: false; kind?: string; message: string };
}

/** The leader's index once the cluster has one again (a transfer leaves a short gap). */
async function settledLeader(): Promise<number> {
  await cluster.waitForLeader(20_000);
  return (await cluster.leader()) ?? leader;
}

test('the RPC port: a forged `client.call` of an operator:write leader call is refused without a token, with an unknown one and with operator:read; the master token runs it', async () => {
  const operatorReader = (await token(await policy('operator-reader', 'operator = "read"'))).SecretID;
  const transport = await TcpTransport.listen({ host: '127.0.0.1', port: 0 });
  try {
    // A follower: the check is the gateway's, whichever server the call reaches first.
    const server = cluster.servers[(leader + 1) % cluster.servers.length]!.serverAddress;
    const before = leader;
    for (const tok of [undefined, operatorReader, secret.agent]) {
      const refused = await forgedCall(transport, server, 'Operator.TransferLeader', {}, tok);
      expect(refused).toMatchObject({ ok: false, kind: 'PermissionDenied', message: 'Permission denied' });
    }
    const unknown = await forgedCall(transport, server, 'Operator.TransferLeader', {}, '00000000-1111-4222-8333-444444444444');
    expect(unknown).toMatchObject({ ok: false, kind: 'PermissionDenied', message: 'ACL not found' });
    // A method no rule names (or args its rule cannot read) is refused too, not run.
    expect(await forgedCall(transport, server, 'Cluster.ClientHeartbeat', null, undefined)).toMatchObject({ ok: false, kind: 'PermissionDenied' });
    // Nothing moved: the same server still leads.
    expect(await settledLeader()).toBe(before);

    const ran = await forgedCall(transport, server, 'Operator.TransferLeader', {}, MASTER);
    expect(ran).toMatchObject({ ok: true });
    leader = await settledLeader();
    expect(leader).not.toBe(before);
  } finally {
    await transport.close();
  }
});

test('operator endpoints through the client: 403 without a token, 200 with the master token (the token crosses to the server)', async () => {
  const anonymous = await viaClient('POST', '/v1/operator/raft/transfer-leader');
  expect(anonymous.status).toBe(403);
  expect(anonymous.body).toContain('Permission denied');
  const before = await settledLeader();
  const ok = await viaClient('POST', '/v1/operator/raft/transfer-leader', MASTER);
  expect(ok.status).toBe(200);
  leader = await settledLeader();
  expect(leader).not.toBe(before);
  // operator:read, forwarded as a leader call the server checks with the request's token.
  expect((await viaClient('GET', '/v1/operator/autopilot/health')).status).toBe(403);
  expect((await viaClient('GET', '/v1/operator/autopilot/health', MASTER)).status).toBe(200);
});

test("the client's own leader call (Connect.Sign of a leaf for its service) goes with its agent token and is signed", async () => {
  const r = await viaClient('GET', '/v1/agent/connect/ca/leaf/web', secret.webWriter, undefined, 30_000);
  expect(r.status).toBe(200);
  expect(r.json<{ Service: string; CertPEM: string }>()).toMatchObject({ Service: 'web' });
});

// Last: it stops every server.
test('with every server down, a cached token still answers an agent endpoint (extend-cache); one never seen is refused', async () => {
  expect((await viaClient('GET', '/v1/agent/self', secret.agentReader)).status).toBe(200);
  // As good a token, but the client has never asked about it.
  const unseen = (await token(agentReaderPolicyId)).SecretID;
  for (let i = 0; i < cluster.servers.length; i++) await cluster.kill(i, 'SIGKILL');
  await sleep(TOKEN_TTL_MS + 500); // the cached answer has expired: the client must ask, and cannot
  const cached = await viaClient('GET', '/v1/agent/self', secret.agentReader, undefined, 30_000);
  expect(cached.status).toBe(200);
  // Extended: the next request within the TTL answers at once from the cache.
  expect((await viaClient('GET', '/v1/agent/self', secret.agentReader, undefined, 30_000)).status).toBe(200);
  expect((await viaClient('GET', '/v1/agent/self', unseen, undefined, 30_000)).status).toBe(403);
  expect(clients.logs(0)).toContain('the down policy answers');
});
