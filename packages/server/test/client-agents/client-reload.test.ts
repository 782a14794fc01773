// SIGHUP on a client agent applies what a server's reload applies (agent/reload.ts): tokens from
// the config files, service definitions, the log level. Three real ACL-enabled servers and one
// client; the client's config file is rewritten and the client signalled.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/wait';
import { ClusterHarness, type HttpAnswer } from '../cluster/support/cluster-harness';
import type { ClientAgents } from '../cluster/support/client-agents';
import { startAclCluster, startJoinedClient, stopAclCluster } from './acl-cluster';

jest.setTimeout(180_000);

const MASTER = 'c2d3e4f5-0000-4000-8000-00000000bbbb';
const serverConfig = join(tmpdir(), `registry-client-reload-${process.pid}.json`);
let cluster: ClusterHarness;
let clients: ClientAgents;
let leader = 0;
let agentSecret = '';
let readerSecret = '';

const master = (method: string, path: string, body?: unknown): Promise<HttpAnswer> =>
  cluster.http(leader, method, path, body, { headers: { 'X-Registry-Token': MASTER }, timeoutMs: 10_000 });

async function tokenFor(name: string, rules: string): Promise<string> {
  const p = await master('PUT', '/v1/acl/policy', { Name: name, Rules: rules });
  if (p.status !== 200) throw new Error(`policy ${name}: ${p.status} ${p.body}`);
  const t = await master('PUT', '/v1/acl/token', { Policies: [{ ID: p.json<{ ID: string }>().ID }] });
  if (t.status !== 200) throw new Error(`token: ${t.status} ${t.body}`);
  return t.json<{ SecretID: string }>().SecretID;
}

function clientConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { tokens, ...rest } = extra as { tokens?: Record<string, string> };
  return { acl: { enabled: true, default_policy: 'deny', token_ttl: '1s', tokens: { agent: agentSecret, ...tokens } }, anti_entropy_interval: '1s', ...rest };
}

/** The client's own config file, which ClientAgents passes with -config-file. */
const configPath = () => join(cluster.dir, 'c0', 'config.json');

/** The pid of client c0: our own child whose command line names its data dir. */
function clientPid(): number {
  const dataDir = clients.clients[0]!.dataDir;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1]);
      if (ppid === process.pid && cmdline.includes(dataDir)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error('client c0 is not running');
}

async function catalogServices(): Promise<string[]> {
  const n = (await master('GET', '/v1/catalog/node/c0')).json<{ Services: Record<string, unknown> } | null>();
  return Object.keys(n?.Services ?? {});
}

const anonymousSelf = () => clients.http(0, 'GET', '/v1/agent/self', undefined, 20_000);

beforeAll(async () => {
  ({ cluster, leader } = await startAclCluster(serverConfig, MASTER));
  agentSecret = await tokenFor('client-agent', 'node_prefix "" { policy = "write" }\nservice_prefix "" { policy = "write" }');
  readerSecret = await tokenFor('agent-reader', 'agent_prefix "" { policy = "read" }');
  clients = await startJoinedClient(cluster, leader, MASTER, cluster.servers.map((s) => s.serverAddress), clientConfig());
});

afterAll(() => stopAclCluster(clients, cluster, serverConfig));

test('SIGHUP applies a changed default token and a new service definition from the config file', async () => {
  expect((await anonymousSelf()).status).toBe(403);
  expect(await catalogServices()).toEqual([]);

  writeFileSync(configPath(), JSON.stringify(clientConfig({ tokens: { default: readerSecret }, services: [{ name: 'db', port: 5432 }], log_level: 'debug' })));
  process.kill(clientPid(), 'SIGHUP');

  // A request without a token now acts with the new default token (agent:read).
  expect(await eventually(async () => (await anonymousSelf()).status === 200, 15_000, 250)).toBe(true);
  // The new definition is registered, with the agent token.
  expect(await eventually(async () => (await catalogServices()).includes('db'), 15_000, 250)).toBe(true);
  // The log is written asynchronously: the line may reach the file a moment after the change took effect.
  expect(await eventually(() => /configuration reloaded.*acl\.tokens\.default/.test(clients.logs(0)), 10_000, 200)).toBe(true);
  expect(clients.logs(0)).toMatch(/configuration reloaded.*services: \+db/);
  expect(clients.running(0)).toBe(true);
});

test('a definition removed from the file goes with the next reload (PUT /v1/agent/reload, agent:write checked on the client)', async () => {
  writeFileSync(configPath(), JSON.stringify(clientConfig({ tokens: { default: readerSecret } })));
  // The default token may only read the agent: the reload endpoint wants agent:write.
  expect((await clients.http(0, 'PUT', '/v1/agent/reload', undefined, 20_000)).status).toBe(403);
  const r = await clients.http(0, 'PUT', `/v1/agent/reload?token=${MASTER}`, undefined, 20_000);
  expect(r.status).toBe(200);
  expect(await eventually(async () => !(await catalogServices()).includes('db'), 15_000, 250)).toBe(true);
});

test('an invalid config file on SIGHUP keeps the running configuration', async () => {
  writeFileSync(configPath(), JSON.stringify({ acl: { enabled: true, down_policy: 'sometimes' } }));
  process.kill(clientPid(), 'SIGHUP');
  expect(await eventually(() => clients.logs(0).includes('reload failed: the new configuration is invalid'), 10_000, 200)).toBe(true);
  expect(clients.running(0)).toBe(true);
  expect((await anonymousSelf()).status).toBe(200); // the default token from before still in force
});
