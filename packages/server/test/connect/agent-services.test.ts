import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
const dir = mkdtempSync(join(tmpdir(), 'registry-proxy-test-'));
beforeAll(async () => {
  a = await startDevAgent((c) => {
    c.connect.proxy.allowManagedApiRegistration = true;
  });
});
afterAll(async () => {
  await a.stop();
  rmSync(dir, { recursive: true, force: true });
});

const register = (body: unknown) => http(a.url, 'PUT', '/v1/agent/service/register', body);
const services = async () => (await http(a.url, 'GET', '/v1/agent/services')).json;

describe('agent service registration', () => {
  test('a typical service is registered on the agent node with defaults', async () => {
    const r = await register({ Name: 'web', Port: 8080, Tags: ['v1'] });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    const s = (await services()).web;
    expect(s).toMatchObject({ ID: 'web', Service: 'web', Tags: ['v1'], Meta: {}, Port: 8080, Address: '', Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false });
    expect(s.Kind).toBeUndefined();
    expect(s.CreateIndex).toBeGreaterThan(0);
    const node = (await http(a.url, 'GET', '/v1/catalog/node/test-agent')).json;
    expect(node.Services.web.Port).toBe(8080);
  });

  test.each([
    [{ Port: 1 }, 'Missing service name'],
    [{ Name: 'x', Address: '0.0.0.0' }, 'Invalid service address'],
    [{ Name: 'x', Weights: { Passing: 0 } }, 'Invalid Weights: Passing must be greater than 0'],
    [{ Name: 'p', Kind: 'connect-proxy', Port: 1 }, 'Proxy.DestinationServiceName must be non-empty for Connect proxy services'],
    [{ Name: 'p', Kind: 'connect-proxy', Proxy: { DestinationServiceName: 'web' } }, 'Port must be set for a Connect proxy'],
    [{ Name: 'p', Kind: 'connect-proxy', Port: 1, Proxy: { DestinationServiceName: 'web' }, Connect: { Native: true } }, 'A Proxy cannot also be Connect Native'],
    [{ Name: 'x', Check: { Status: 'bogus' } }, "Status for checks must 'passing', 'warning', 'critical'"],
  ])('%j is 400: %s', async (body, message) => {
    const r = await register(body);
    expect(r.status).toBe(400);
    expect(r.text).toContain(message);
  });

  test('a connect proxy and a native service appear in /catalog/connect and /health/connect', async () => {
    expect((await register({ Name: 'web-proxy', Kind: 'connect-proxy', Port: 9000, Proxy: { DestinationServiceName: 'web', Upstreams: [{ DestinationName: 'db', LocalBindPort: 9191 }] } })).status).toBe(200);
    expect((await register({ Name: 'native-web', ID: 'native-1', Port: 7000, Connect: { Native: true } })).status).toBe(200);
    const s = (await services())['web-proxy'];
    expect(s).toMatchObject({ Kind: 'connect-proxy', ProxyDestination: 'web', Proxy: { DestinationServiceName: 'web' } });
    const catalog = (await http(a.url, 'GET', '/v1/catalog/connect/web')).json;
    expect(catalog.map((e: any) => [e.ServiceID, e.ServiceKind, e.ServicePort])).toEqual([['web-proxy', 'connect-proxy', 9000]]);
    expect(catalog[0].ServiceProxy.Upstreams).toEqual([{ DestinationName: 'db', LocalBindPort: 9191 }]);
    const health = (await http(a.url, 'GET', '/v1/health/connect/native-web')).json;
    expect(health.map((e: any) => e.Service.ID)).toEqual(['native-1']);
    expect((await services())['native-1'].Connect).toEqual({ Native: true });
  });

  test('a sidecar service is registered beside its service and removed with it', async () => {
    expect((await register({ Name: 'api', Port: 5000, Connect: { SidecarService: {} } })).status).toBe(200);
    const all = await services();
    expect(all['api-sidecar-proxy']).toMatchObject({
      Kind: 'connect-proxy', Service: 'api-sidecar-proxy', Port: 21000,
      Proxy: { DestinationServiceName: 'api', DestinationServiceID: 'api', LocalServiceAddress: '127.0.0.1', LocalServicePort: 5000 },
    });
    expect((await http(a.url, 'GET', '/v1/catalog/connect/api')).json.map((e: any) => e.ServiceID)).toEqual(['api-sidecar-proxy']);
    expect((await http(a.url, 'PUT', '/v1/agent/service/deregister/api')).status).toBe(200);
    const after = await services();
    expect(after.api).toBeUndefined();
    expect(after['api-sidecar-proxy']).toBeUndefined();
    expect((await http(a.url, 'GET', '/v1/catalog/connect/api')).json).toEqual([]);
  });

  test('service checks are registered with Consul-style IDs and names; deregistering an unknown ID is fine with ACLs off', async () => {
    expect((await register({ Name: 'chk', Checks: [{ TTL: '10s' }, { TTL: '10s', Status: 'passing' }] })).status).toBe(200);
    const checks = (await http(a.url, 'GET', '/v1/health/checks/chk')).json;
    expect(checks.map((c: any) => [c.CheckID, c.Name, c.Status])).toEqual([
      ['service:chk:1', "Service 'chk' check", 'critical'],
      ['service:chk:2', "Service 'chk' check", 'passing'],
    ]);
    expect((await http(a.url, 'PUT', '/v1/agent/service/deregister/nope')).status).toBe(200);
  });
});

describe('GET /v1/agent/service/:id', () => {
  test('one service with a ContentHash; blocking on the hash returns when it changes; unknown is 404', async () => {
    await register({ Name: 'single', Port: 1 });
    const r = await http(a.url, 'GET', '/v1/agent/service/single');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ID: 'single', Service: 'single', Port: 1 });
    expect(r.json.ContentHash).toBe(r.headers.get('x-registry-contenthash'));
    const blocked = http(a.url, 'GET', `/v1/agent/service/single?hash=${r.json.ContentHash}&wait=10s`);
    await new Promise((res) => setTimeout(res, 100));
    await register({ Name: 'single', Port: 2 });
    const changed = await blocked;
    expect(changed.json.Port).toBe(2);
    expect(changed.json.ContentHash).not.toBe(r.json.ContentHash);
    const missing = await http(a.url, 'GET', '/v1/agent/service/nope');
    expect(missing.status).toBe(404);
  });
});

describe('managed proxies', () => {
  const out = join(dir, 'proxy.json');
  // A tiny "proxy": records its identity and stays up.
  const script = "require('fs').writeFileSync(process.argv[1], JSON.stringify({ id: process.env.REGISTRY_PROXY_ID, token: process.env.REGISTRY_PROXY_TOKEN, addr: process.env.REGISTRY_HTTP_ADDR, pid: process.pid })); setInterval(() => {}, 1000);";
  const command = [process.execPath, '-e', script, out];
  const seen = () => JSON.parse(readFileSync(out, 'utf8'));

  test('registration through the API is refused unless allowed by configuration', async () => {
    const b = await startDevAgent();
    try {
      const r = await http(b.url, 'PUT', '/v1/agent/service/register', { Name: 'x', Port: 1, Connect: { Proxy: { Command: command } } });
      expect(r.status).toBe(400);
      expect(r.text).toBe('Managed proxy registration via the API is disallowed.');
    } finally {
      await b.stop();
    }
  });

  test('the agent starts the proxy with its identity, serves its config with a content hash, and restarts it when it dies', async () => {
    const def = { Name: 'shop', Port: 6000, Connect: { Proxy: { ExecMode: 'daemon', Command: command, Config: { connect_timeout_ms: 1000 } } } };
    expect((await register(def)).status).toBe(200);
    await waitFor(() => {
      try {
        return seen().id === 'shop-proxy';
      } catch {
        return false;
      }
    }, 10_000);
    const first = seen();
    expect(first.addr).toBe(a.agent.httpAddress);
    expect(first.token).toMatch(/^[0-9a-f-]{36}$/);
    expect((await services())['shop-proxy']).toMatchObject({ Kind: 'connect-proxy', Port: 20000, Proxy: { DestinationServiceName: 'shop', DestinationServiceID: 'shop' } });

    const cfg = await http(a.url, 'GET', '/v1/agent/connect/proxy/shop-proxy', undefined, { 'X-Registry-Token': first.token });
    expect(cfg.status).toBe(200);
    expect(cfg.json).toMatchObject({
      ProxyServiceID: 'shop-proxy', TargetServiceID: 'shop', TargetServiceName: 'shop', ExecMode: 'daemon', Command: command,
      Config: { bind_address: '127.0.0.1', bind_port: 20000, local_service_address: '127.0.0.1:6000', connect_timeout_ms: 1000 },
      Upstreams: [],
    });
    expect(cfg.headers.get('x-registry-contenthash')).toBe(cfg.json.ContentHash);

    // Blocking on the hash returns when the definition changes.
    const started = Date.now();
    const blocked = http(a.url, 'GET', `/v1/agent/connect/proxy/shop-proxy?hash=${cfg.json.ContentHash}&wait=10s`);
    await new Promise((r) => setTimeout(r, 100));
    expect((await register({ ...def, Connect: { Proxy: { ...def.Connect.Proxy, Config: { connect_timeout_ms: 2000 } } } })).status).toBe(200);
    const changed = await blocked;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(changed.json.Config.connect_timeout_ms).toBe(2000);
    expect(changed.json.ContentHash).not.toBe(cfg.json.ContentHash);

    // A blocking request with the current hash waits out its wait time.
    const t0 = Date.now();
    const same = await http(a.url, 'GET', `/v1/agent/connect/proxy/shop-proxy?hash=${changed.json.ContentHash}&wait=300ms`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(same.json.ContentHash).toBe(changed.json.ContentHash);

    // Kill the proxy: the agent starts it again.
    const pid = a.agent.proxies!.pid('shop-proxy')!;
    expect(pid).toBe(seen().pid);
    process.kill(pid, 'SIGKILL');
    await waitFor(() => {
      const now = a.agent.proxies!.pid('shop-proxy');
      return now !== undefined && now !== pid && seen().pid === now;
    }, 10_000);
    expect(a.agent.proxies!.restarts('shop-proxy')).toBeGreaterThanOrEqual(1);

    // Deregistering the service stops the proxy and removes the proxy service.
    const last = a.agent.proxies!.pid('shop-proxy')!;
    expect((await http(a.url, 'PUT', '/v1/agent/service/deregister/shop')).status).toBe(200);
    expect(a.agent.proxies!.pid('shop-proxy')).toBeUndefined();
    expect((await services())['shop-proxy']).toBeUndefined();
    await waitFor(() => {
      try {
        process.kill(last, 0);
        return false;
      } catch {
        return true;
      }
    }, 5_000);
    const gone = await http(a.url, 'GET', '/v1/agent/connect/proxy/shop-proxy');
    expect(gone.status).toBe(404);
    expect(gone.text).toBe('unknown proxy service ID: shop-proxy');
  });
});
