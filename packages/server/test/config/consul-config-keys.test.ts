// Consul's agent config keys the Go client's users set (issue 15): node_id (used instead of the
// generated ID), node_meta (on the agent's own catalog node), connect.ca_config with cluster_id (the
// CA made at first leadership), ports.proxy_min_port / proxy_max_port (managed proxies' ports), and
// the legacy top-level ACL token keys. Each is read from a real config file and seen over HTTP.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, buildConfig, ConfigError, createLogger, type AgentConfig } from '@registry/server';
import { http, waitFor } from '../support/dev-agent';

jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-config-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function configFile(content: unknown): string {
  const path = join(dir, `config-${++n}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

function configWith(content: unknown): AgentConfig {
  return buildConfig({ dev: true, httpPort: 0, serverPort: 0, node: 'keys-agent', configFile: [configFile(content)] });
}

async function start(config: AgentConfig): Promise<{ agent: Agent; url: string }> {
  const agent = await Agent.start(config, { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false) });
  const url = `http://127.0.0.1:${agent.httpPort}`;
  await waitFor(async () => (await (await fetch(`${url}/v1/status/leader`)).json()) !== '', 10_000);
  await waitFor(() => agent.store.catalogNode(config.nodeName).value !== null, 10_000);
  return { agent, url };
}

function configError(content: unknown): string {
  try {
    configWith(content);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('the configuration was accepted');
}

const NODE_ID = 'A1B2C3D4-0000-4000-8000-0123456789AB';
const CLUSTER_ID = '11111111-2222-4333-8444-555555555555';

describe('one agent started from a config file with node_id, node_meta, ca_config and the proxy port range', () => {
  let agent: Agent;
  let url: string;
  beforeAll(async () => {
    ({ agent, url } = await start(
      configWith({
        node_id: NODE_ID,
        node_meta: { rack: 'r1', env: 'prod' },
        connect: {
          enabled: true,
          ca_config: { cluster_id: CLUSTER_ID, leaf_cert_ttl: '96h', rotation_period: '1000h' },
          proxy: { allow_managed_api_registration: true },
        },
        ports: { proxy_min_port: 23500, proxy_max_port: 23501 },
      }),
    ));
  });
  afterAll(() => agent?.stop());

  test('node_id is the agent’s node ID (lower-cased, as Consul stores it) in /v1/agent/self and the catalog', async () => {
    const self = await http(url, 'GET', '/v1/agent/self');
    expect(self.status).toBe(200);
    expect(self.json.Config.NodeID).toBe(NODE_ID.toLowerCase());
    expect(self.json.DebugConfig.NodeID).toBe(NODE_ID.toLowerCase());
    await waitFor(async () => (await http(url, 'GET', '/v1/catalog/node/keys-agent')).json?.Node?.ID === NODE_ID.toLowerCase(), 10_000);
    // The catalog can be asked by that ID too.
    const byId = await http(url, 'GET', `/v1/health/node/${NODE_ID.toLowerCase()}`);
    expect(byId.status).toBe(200);
    expect(byId.json.map((c: { CheckID: string }) => c.CheckID)).toContain('serfHealth');
  });

  test('node_meta is on the agent’s own catalog node and filters by ?node-meta', async () => {
    await waitFor(async () => (await http(url, 'GET', '/v1/catalog/node/keys-agent')).json?.Node?.Meta?.rack === 'r1', 10_000);
    const node = (await http(url, 'GET', '/v1/catalog/node/keys-agent')).json.Node;
    expect(node.Meta).toEqual({ rack: 'r1', env: 'prod', 'registry-network-segment': '' });
    const filtered = await http(url, 'GET', '/v1/catalog/nodes?node-meta=rack:r1&node-meta=env:prod');
    expect(filtered.json.map((x: { Node: string }) => x.Node)).toEqual(['keys-agent']);
    expect((await http(url, 'GET', '/v1/catalog/nodes?node-meta=rack:r2')).json).toEqual([]);
    const self = (await http(url, 'GET', '/v1/agent/self')).json;
    expect(self.DebugConfig.NodeMeta).toEqual({ rack: 'r1', env: 'prod' });
  });

  test('connect.ca_config feeds the CA made at first leadership: cluster_id gives the trust domain, settings are the config', async () => {
    await waitFor(async () => (await http(url, 'GET', '/v1/connect/ca/roots')).json?.Roots?.length === 1, 15_000);
    const roots = (await http(url, 'GET', '/v1/connect/ca/roots')).json;
    expect(roots.TrustDomain).toBe(`${CLUSTER_ID}.registry`);
    const ca = await http(url, 'GET', '/v1/connect/ca/configuration');
    expect(ca.status).toBe(200);
    expect(ca.json.Provider).toBe('registry');
    expect(ca.json.Config).toMatchObject({ LeafCertTTL: '96h', RotationPeriod: '1000h' });
    // A leaf carries a SPIFFE ID in that trust domain.
    const leaf = await http(url, 'GET', '/v1/agent/connect/ca/leaf/web');
    expect(leaf.status).toBe(200);
    expect(leaf.json.ServiceURI).toBe(`spiffe://${CLUSTER_ID}.registry/ns/default/dc/dc1/svc/web`);
  });

  test('managed proxies take their ports from ports.proxy_min_port..proxy_max_port, and the range can run out', async () => {
    const proxy = (name: string) => ({ Name: name, Port: 7000, Connect: { Proxy: { ExecMode: 'daemon', Command: ['sleep', '60'] } } });
    expect((await http(url, 'PUT', '/v1/agent/service/register', proxy('alpha'))).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/service/register', proxy('beta'))).status).toBe(200);
    const services = (await http(url, 'GET', '/v1/agent/services')).json;
    expect([services['alpha-proxy'].Port, services['beta-proxy'].Port].sort()).toEqual([23500, 23501]);
    const third = await http(url, 'PUT', '/v1/agent/service/register', proxy('gamma'));
    expect(third.status).toBe(400);
    expect(third.text).toMatch(/no free port in the proxy port range/);
    const self = (await http(url, 'GET', '/v1/agent/self')).json;
    expect(self.DebugConfig).toMatchObject({ ConnectProxyBindMinPort: 23500, ConnectProxyBindMaxPort: 23501 });
    for (const s of ['alpha', 'beta']) expect((await http(url, 'PUT', `/v1/agent/service/deregister/${s}`)).status).toBe(200);
  });
});

test('bad values of the new keys are config errors naming the file and key; an agent never starts with them', () => {
  expect(configError({ node_id: 'not-a-uuid' })).toMatch(/config-\d+\.json: node_id must be a UUID/);
  expect(configError({ node_id: '1234' })).toMatch(/node_id/);
  expect(configError({ node_meta: { 'registry-owned': 'x' } })).toMatch(/invalid node_meta: Key prefix 'registry-' is reserved/);
  expect(configError({ node_meta: { 'bad key': 'x' } })).toMatch(/invalid node_meta: Key contains invalid characters/);
  const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
  expect(configError({ node_meta: many })).toMatch(/invalid node_meta: Node metadata cannot contain more than 64/);
  expect(configError({ node_meta: { rack: 1 } })).toMatch(/node_meta\.rack must be string/);
  expect(configError({ connect: { ca_config: { cluster_id: 'cluster-one' } } })).toMatch(/connect\.ca_config\.cluster_id must be a UUID/);
  expect(configError({ connect: { ca_config: { leaf_cert_ttl: '10m' } } })).toMatch(/connect\.ca_config: LeafCertTTL must be at least 1h/);
  expect(configError({ connect: { ca_config: { private_key: '-----BEGIN' } } })).toMatch(/private_key and root_cert cannot be set/);
  expect(configError({ ports: { proxy_min_port: 30000, proxy_max_port: 29000 } })).toMatch(/ports\.proxy_min_port \(30000\) must not be greater than ports\.proxy_max_port \(29000\)/);
  expect(configError({ ports: { proxy_min_port: 70000 } })).toMatch(/ports\.proxy_min_port must be a port number/);
});

test('legacy top-level ACL token keys are read as Consul 1.4 reads them; acl.tokens wins in the same file', async () => {
  const legacy = configWith({
    acl_token: 'dflt',
    acl_agent_token: 'agt',
    acl_agent_master_token: 'amaster',
    acl_replication_token: 'repl',
  });
  expect(legacy.acl.tokens).toMatchObject({ default: 'dflt', agent: 'agt', agentMaster: 'amaster', replication: 'repl' });
  const both = configWith({ acl_agent_token: 'old', acl: { tokens: { agent: 'new' } } });
  expect(both.acl.tokens.agent).toBe('new');
  expect(configError({ acl_agent_master_token: 7 })).toMatch(/acl_agent_master_token must be string/);

  // Seen over HTTP: with ACLs on and default deny, acl_token is what anonymous requests act with,
  // and the other legacy tokens show (hidden) in DebugConfig.
  const { agent, url } = await start(
    configWith({
      acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: 'root-secret' } },
      acl_token: 'root-secret',
      acl_agent_token: 'agt',
      acl_replication_token: 'repl',
    }),
  );
  try {
    await waitFor(async () => (await http(url, 'GET', '/v1/acl/token/self')).status === 200, 15_000);
    const self = await http(url, 'GET', '/v1/agent/self');
    expect(self.status).toBe(200);
    expect(self.json.DebugConfig).toMatchObject({ ACLToken: 'hidden', ACLAgentToken: 'hidden', ACLReplicationToken: 'hidden', ACLAgentMasterToken: '' });
    // A request with a token of its own does not fall back to acl_token.
    expect((await http(url, 'GET', '/v1/agent/self', undefined, { 'X-Registry-Token': '00000000-0000-4000-8000-000000000000' })).status).toBe(403);
  } finally {
    await agent.stop();
  }
});
