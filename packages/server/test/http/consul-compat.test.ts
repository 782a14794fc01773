// Issue 15 part 1 at the HTTP level: `http_config.consul_compat` / `-consul-compat`. Off by default
// (the spec's X-Registry-* contract unchanged); on, Consul's spellings are accepted and every
// X-Registry-* response header is also sent under its X-Consul-* name, on the direct path and the
// Express path, on answers and errors alike.
import { applyConfigFile, buildConfig, defaultConfig } from '@registry/server';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

const ROOT = 'c0ffee00-0000-4000-8000-0000000c0a7c';
const aclOn = (compat: boolean) => (c: any) => {
  c.acl.enabled = true;
  c.acl.defaultPolicy = 'deny';
  c.acl.tokens.initialManagement = ROOT;
  c.consulCompat = compat;
};
const ready = (t: TestAgent) => waitFor(async () => (await http(t.url, 'GET', '/v1/acl/token/self', undefined, { 'X-Registry-Token': ROOT })).status === 200, 10_000);

test('configuration: http_config.consul_compat and the -consul-compat flag; off by default', () => {
  expect(defaultConfig().consulCompat).toBe(false);
  expect(applyConfigFile(defaultConfig(), { http_config: { consul_compat: true } }).consulCompat).toBe(true);
  expect(() => applyConfigFile(defaultConfig(), { http_config: { consul_compat: 'yes' } })).toThrow(/consul_compat must be true or false/);
  expect(buildConfig({ dev: true, consulCompat: true }).consulCompat).toBe(true);
  expect(buildConfig({ dev: true }).consulCompat).toBe(false);
});

describe('consul_compat off (the default)', () => {
  let t: TestAgent;
  beforeAll(async () => {
    t = await startDevAgent(aclOn(false));
    await ready(t);
  });
  afterAll(() => t?.stop());

  test('X-Consul-Token is not a token source and no X-Consul-* header is sent', async () => {
    expect((await http(t.url, 'PUT', '/v1/kv/k', 'v', { 'X-Consul-Token': ROOT })).status).toBe(403);
    const r = await http(t.url, 'GET', '/v1/catalog/nodes', undefined, { 'X-Registry-Token': ROOT });
    expect(r.headers.get('x-registry-index')).toBeTruthy();
    expect([...r.headers.keys()].filter((k) => k.startsWith('x-consul-'))).toEqual([]);
  });

  test('intention SourceType consul is refused; consul-network-segment is an ordinary key', async () => {
    const r = await http(t.url, 'POST', '/v1/connect/intentions', { SourceName: 'a', DestinationName: 'b', Action: 'allow', SourceType: 'consul' }, { 'X-Registry-Token': ROOT });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/SourceType must be set to 'registry'/);
    await http(t.url, 'PUT', '/v1/catalog/register', { Node: 'seg-off', Address: '10.0.0.2', NodeMeta: { 'consul-network-segment': 'x' } }, { 'X-Registry-Token': ROOT });
    const node = (await http(t.url, 'GET', '/v1/catalog/node/seg-off', undefined, { 'X-Registry-Token': ROOT })).json;
    expect(node.Node.Meta).toEqual({ 'consul-network-segment': 'x' });
  });
});

describe('consul_compat on', () => {
  let t: TestAgent;
  beforeAll(async () => {
    t = await startDevAgent(aclOn(true));
    await ready(t);
  });
  afterAll(() => t?.stop());

  test('X-Consul-Token is a token source with the precedence of X-Registry-Token', async () => {
    expect((await http(t.url, 'PUT', '/v1/kv/k', 'v', { 'X-Consul-Token': ROOT })).status).toBe(200);
    expect((await http(t.url, 'PUT', '/v1/kv/k', 'v')).status).toBe(403);
    // ?token= comes first, then the header, then Authorization: Bearer.
    expect((await http(t.url, 'PUT', '/v1/kv/k?token=nope', 'v', { 'X-Consul-Token': ROOT })).status).toBe(403);
    expect((await http(t.url, 'PUT', '/v1/kv/k', 'v', { 'X-Consul-Token': ROOT, Authorization: 'Bearer nope' })).status).toBe(200);
    expect((await http(t.url, 'PUT', '/v1/kv/k', 'v', { 'X-Consul-Token': 'nope', Authorization: `Bearer ${ROOT}` })).status).toBe(403);
    // Both names sent: the registry one counts.
    expect((await http(t.url, 'PUT', '/v1/kv/k', 'v', { 'X-Registry-Token': ROOT, 'X-Consul-Token': 'nope' })).status).toBe(200);
    const self = await http(t.url, 'GET', '/v1/acl/token/self', undefined, { 'X-Consul-Token': ROOT });
    expect(self.json.SecretID).toBe(ROOT);
  });

  const H = { 'X-Consul-Token': ROOT };
  const copies = (r: { headers: Headers }) => {
    const out: Record<string, [string | null, string | null]> = {};
    for (const [k] of r.headers) {
      if (k.startsWith('x-registry-')) {
        const rest = k.slice('x-registry-'.length);
        out[rest] = [r.headers.get(k), r.headers.get('x-consul-' + rest)];
      }
    }
    return out;
  };

  test('every X-Registry-* header is also sent as X-Consul-*: direct path, Express path, 404 and errors', async () => {
    await http(t.url, 'PUT', '/v1/kv/there', 'v', H);
    const direct = await http(t.url, 'GET', '/v1/kv/there', undefined, H);
    const viaExpress = await http(t.url, 'GET', '/v1/kv/there', undefined, { ...H, 'Content-Encoding': 'gzip' });
    const missing = await http(t.url, 'GET', '/v1/kv/absent', undefined, H);
    for (const r of [direct, viaExpress, missing]) {
      const c = copies(r);
      expect(Object.keys(c).sort()).toEqual(['index', 'knownleader', 'lastcontact']);
      for (const [registry, consul] of Object.values(c)) expect(consul).toBe(registry);
    }
    expect(missing.status).toBe(404);
    expect(direct.headers.get('x-consul-knownleader')).toBe('true');
    expect(direct.headers.get('x-consul-lastcontact')).toBe('0');
  });

  test('X-Consul-ContentHash beside X-Registry-ContentHash (hash blocking)', async () => {
    expect((await http(t.url, 'PUT', '/v1/agent/service/register', { Name: 'hashy', Port: 1 }, H)).status).toBe(200);
    const r = await http(t.url, 'GET', '/v1/agent/service/hashy', undefined, H);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-registry-contenthash')).toBeTruthy();
    expect(r.headers.get('x-consul-contenthash')).toBe(r.headers.get('x-registry-contenthash'));
  });

  test('a blocking read with X-Consul-Token wakes on a change and reports the new index under both names', async () => {
    const first = await http(t.url, 'GET', '/v1/kv/there', undefined, H);
    const index = first.headers.get('x-consul-index');
    const blocked = http(t.url, 'GET', `/v1/kv/there?index=${index}&wait=10s`, undefined, H);
    await new Promise((r) => setTimeout(r, 150));
    await http(t.url, 'PUT', '/v1/kv/there', 'v2', H);
    const woke = await blocked;
    expect(Number(woke.headers.get('x-consul-index'))).toBeGreaterThan(Number(index));
    expect(woke.headers.get('x-consul-index')).toBe(woke.headers.get('x-registry-index'));
  });

  test('intention SourceType consul is accepted and answered as sent; registry stays the default', async () => {
    const created = await http(t.url, 'POST', '/v1/connect/intentions', { SourceName: 'web', DestinationName: 'db', Action: 'allow', SourceType: 'consul' }, H);
    expect(created.status).toBe(200);
    const read = await http(t.url, 'GET', `/v1/connect/intentions/${created.json.ID}`, undefined, H);
    expect(read.json.SourceType).toBe('consul');
    const updated = await http(t.url, 'PUT', `/v1/connect/intentions/${created.json.ID}`, { SourceName: 'web', DestinationName: 'db', Action: 'deny', SourceType: 'consul' }, H);
    expect(updated.status).toBe(200);
    expect((await http(t.url, 'GET', `/v1/connect/intentions/${created.json.ID}`, undefined, H)).json).toMatchObject({ SourceType: 'consul', Action: 'deny' });
    const plain = await http(t.url, 'POST', '/v1/connect/intentions', { SourceName: 'api', DestinationName: 'db', Action: 'allow' }, H);
    expect((await http(t.url, 'GET', `/v1/connect/intentions/${plain.json.ID}`, undefined, H)).json.SourceType).toBe('registry');
    expect((await http(t.url, 'POST', '/v1/connect/intentions', { SourceName: 'x', DestinationName: 'db', Action: 'allow', SourceType: 'other' }, H)).status).toBe(400);
    const check = await http(t.url, 'GET', '/v1/connect/intentions/check?source=web&destination=db&source-type=consul', undefined, H);
    expect(check.status).toBe(200);
    expect(check.json).toEqual({ Allowed: false });
  });

  test('node meta consul-network-segment is an alias of registry-network-segment (register and node-meta filters)', async () => {
    const reg = await http(t.url, 'PUT', '/v1/catalog/register', { Node: 'seg-on', Address: '10.0.0.3', NodeMeta: { 'consul-network-segment': 'alpha', rack: 'r1' } }, H);
    expect(reg.status).toBe(200);
    const node = (await http(t.url, 'GET', '/v1/catalog/node/seg-on', undefined, H)).json;
    expect(node.Node.Meta).toEqual({ 'registry-network-segment': 'alpha', rack: 'r1' });
    const byConsulKey = (await http(t.url, 'GET', '/v1/catalog/nodes?node-meta=consul-network-segment:alpha', undefined, H)).json;
    expect(byConsulKey.map((n: any) => n.Node)).toEqual(['seg-on']);
    const byRegistryKey = (await http(t.url, 'GET', '/v1/catalog/nodes?node-meta=registry-network-segment:alpha', undefined, H)).json;
    expect(byRegistryKey.map((n: any) => n.Node)).toEqual(['seg-on']);
  });
});

describe('consul_compat with translate_wan_addrs', () => {
  let t: TestAgent;
  beforeAll(async () => {
    t = await startDevAgent((c) => {
      c.consulCompat = true;
      c.translateWanAddrs = true;
    });
  });
  afterAll(() => t?.stop());

  test('X-Consul-Translate-Addresses beside X-Registry-Translate-Addresses on every response', async () => {
    for (const r of [await http(t.url, 'GET', '/v1/catalog/nodes'), await http(t.url, 'GET', '/v1/no/such'), await http(t.url, 'PUT', '/v1/kv/x', 'y')]) {
      expect(r.headers.get('x-registry-translate-addresses')).toBe('true');
      expect(r.headers.get('x-consul-translate-addresses')).toBe('true');
    }
  });
});
