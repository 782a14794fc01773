// Managed proxies as Consul's Go client registers them (issue 15): ExecMode "script" runs the
// command through /bin/sh -c under the same supervisor as "daemon" (identity in the environment,
// stopped on deregistration), and an upstream without DestinationType is a "service" upstream.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
const dir = mkdtempSync(join(tmpdir(), 'registry-proxy-modes-'));
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
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('ExecMode "script" runs the command with /bin/sh -c, with the proxy identity, and stops it on deregistration', async () => {
  const out = join(dir, 'script.out');
  // Shell syntax (a variable, a redirect, a `;`) only works when the words go through a shell.
  const command = [`printf '%s %s' "$REGISTRY_PROXY_ID" "$REGISTRY_HTTP_ADDR" > ${out};`, 'exec sleep 60'];
  const upstreams = [{ DestinationName: 'db', LocalBindPort: 9191 }, { DestinationType: 'prepared_query', DestinationName: 'geo-db', LocalBindPort: 9192 }];
  const r = await register({ Name: 'billing', Port: 7000, Connect: { Proxy: { ExecMode: 'script', Command: command, Upstreams: upstreams } } });
  expect(r.status).toBe(200);
  await waitFor(() => {
    try {
      return readFileSync(out, 'utf8') === `billing-proxy ${a.agent.httpAddress}`;
    } catch {
      return false;
    }
  }, 10_000);
  const pid = a.agent.proxies!.pid('billing-proxy')!;
  expect(alive(pid)).toBe(true);

  const cfg = await http(a.url, 'GET', '/v1/agent/connect/proxy/billing-proxy');
  expect(cfg.status).toBe(200);
  expect(cfg.json).toMatchObject({ ExecMode: 'script', Command: command });
  expect(cfg.json.Upstreams).toEqual([
    { DestinationType: 'service', DestinationName: 'db', LocalBindPort: 9191 },
    { DestinationType: 'prepared_query', DestinationName: 'geo-db', LocalBindPort: 9192 },
  ]);

  expect((await http(a.url, 'PUT', '/v1/agent/service/deregister/billing')).status).toBe(200);
  await waitFor(() => !alive(pid), 10_000);
  expect(a.agent.proxies!.pid('billing-proxy')).toBeUndefined();
});

test('a daemon proxy\'s upstreams get DestinationType "service" too', async () => {
  const command = [process.execPath, '-e', 'setInterval(() => {}, 1000)'];
  expect((await register({ Name: 'orders', Port: 7001, Connect: { Proxy: { Command: command, Upstreams: [{ DestinationName: 'cache', LocalBindPort: 9300 }] } } })).status).toBe(200);
  const cfg = await http(a.url, 'GET', '/v1/agent/connect/proxy/orders-proxy');
  expect(cfg.json.ExecMode).toBe('daemon');
  expect(cfg.json.Upstreams).toEqual([{ DestinationType: 'service', DestinationName: 'cache', LocalBindPort: 9300 }]);
  expect((await http(a.url, 'PUT', '/v1/agent/service/deregister/orders')).status).toBe(200);
});

test("the deprecated Config.upstreams moves into Upstreams and leaves Config, as Consul 1.4 moves it (issue #29 item 6)", async () => {
  const command = [process.execPath, '-e', 'setInterval(() => {}, 1000)'];
  const legacy = [
    { destination_name: 'db', local_bind_port: 9400, destination_datacenter: 'dc2', connect_timeout_ms: 500 },
    { destination_type: 'prepared_query', destination_name: 'geo', local_bind_address: '127.0.0.2', local_bind_port: 9401 },
    { destination_name: 'skipped', local_bind_port: 'not a number' },
  ];
  const r = await register({ Name: 'legacy', Port: 7003, Connect: { Proxy: { Command: command, Config: { upstreams: legacy, bind_port: 21999 } } } });
  expect(r.status).toBe(200);
  const cfg = (await http(a.url, 'GET', '/v1/agent/connect/proxy/legacy-proxy')).json;
  expect(cfg.Config.upstreams).toBeUndefined();
  expect(cfg.Config.bind_port).toBe(21999);
  expect(cfg.Upstreams).toEqual([
    { DestinationType: 'service', DestinationName: 'db', Datacenter: 'dc2', LocalBindPort: 9400, Config: { connect_timeout_ms: 500 } },
    { DestinationType: 'prepared_query', DestinationName: 'geo', Datacenter: '', LocalBindAddress: '127.0.0.2', LocalBindPort: 9401, Config: null },
  ]);
  expect((await http(a.url, 'PUT', '/v1/agent/service/deregister/legacy')).status).toBe(200);
  // With Upstreams given, the old form is dropped, not merged.
  const both = await register({ Name: 'both', Port: 7004, Connect: { Proxy: { Command: command, Upstreams: [{ DestinationName: 'cache', LocalBindPort: 9402 }], Config: { upstreams: legacy } } } });
  expect(both.status).toBe(200);
  const cfg2 = (await http(a.url, 'GET', '/v1/agent/connect/proxy/both-proxy')).json;
  expect(cfg2.Config.upstreams).toBeUndefined();
  expect(cfg2.Upstreams).toEqual([{ DestinationType: 'service', DestinationName: 'cache', LocalBindPort: 9402 }]);
  expect((await http(a.url, 'PUT', '/v1/agent/service/deregister/both')).status).toBe(200);
});

test.each([
  [{ ExecMode: 'docker', Command: ['x'] }, 'Managed proxy ExecMode "docker" is not supported: "daemon" or "script"'],
  [{ Command: ['x'], Upstreams: [{ DestinationType: 'bogus', DestinationName: 'db' }] }, 'Invalid managed proxy upstream: unknown DestinationType "bogus": "service" or "prepared_query"'],
])('%j is refused with 400 and registers nothing', async (proxy, reason) => {
  const r = await register({ Name: 'refused', Port: 7002, Connect: { Proxy: proxy } });
  expect(r.status).toBe(400);
  expect(r.text).toBe(reason);
  expect((await http(a.url, 'GET', '/v1/agent/services')).json.refused).toBeUndefined();
});
