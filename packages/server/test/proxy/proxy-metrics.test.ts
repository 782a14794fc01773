// Connect proxies' connection metrics (issue #27): a managed proxy the agent runs reports its counts
// to the agent, so they are in /v1/agent/metrics (Prometheus text, parsed by a real parser) under
// Consul 1.4's proxy metric names and labels; a proxy the agent does not run serves the same series
// at its own `prometheus_bind_addr` (proxy Config, or the -prometheus-bind-addr flag).
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { freePorts } from '../support/ports';
import { scrape, typeOf, valueOf, type Families } from '../metrics/scrape';
import { ask, echoServer, openConn, roundTrip, spawnProxy, type ProxyProcess, freeRange } from './mesh-support';

let a: TestAgent;
let dir: string;
const servers: Server[] = [];
const proxies: ProxyProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-proxy-metrics-'));
  const base = await freeRange();
  a = await startDevAgent((c) => {
    c.connect.proxy.allowManagedApiRegistration = true;
    c.connect.proxyPorts = { min: base, max: base + 1 };
  });
}, 60_000);
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.stop()));
  for (const s of servers) s.close();
  await a?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const reg = (body: unknown) => http(a.url, 'PUT', '/v1/agent/service/register', body);
const inbound = { dst: 'db' };
const upstream = { src: 'web', dst_type: 'service', dst: 'db' };

test("managed proxies' connection counts are in the agent's /v1/agent/metrics", async () => {
  const [dbPort, up] = (await freePorts(2)) as [number, number];
  servers.push(await echoServer(dbPort, 'db:'));
  expect((await reg({ Name: 'db', Port: dbPort, Connect: { Proxy: {} } })).status).toBe(200);
  expect((await reg({ Name: 'web', Port: 1, Connect: { Proxy: { Upstreams: [{ DestinationName: 'db', LocalBindPort: up }] } } })).status).toBe(200);
  await waitFor(async () => (await roundTrip(up, 'hi', 1000)) === 'db:hi', 30_000, 200);

  // One connection held open: both listeners count it as open (reports come about once a second).
  const held = await openConn(up);
  expect(await ask(held, 'held')).toBe('db:held');
  await waitFor(async () => {
    const s = await scrape(a.url);
    return valueOf(s.families, 'registry_proxy_inbound_conns', inbound) === 1 && valueOf(s.families, 'registry_proxy_upstream_conns', upstream) === 1;
  }, 10_000, 200);
  held.destroy();

  let s = await scrape(a.url);
  expect(s.status).toBe(200);
  expect(typeOf(s.families, 'registry_proxy_inbound_accepted_total')).toBe('COUNTER');
  expect(typeOf(s.families, 'registry_proxy_inbound_conns')).toBe('GAUGE');
  expect(valueOf(s.families, 'registry_proxy_inbound_accepted_total', inbound)).toBeGreaterThanOrEqual(2);
  expect(valueOf(s.families, 'registry_proxy_upstream_accepted_total', upstream)).toBeGreaterThanOrEqual(2);
  // 'hi' + 'held' went in, 'db:hi' + 'db:held' came back, on both listeners.
  expect(valueOf(s.families, 'registry_proxy_inbound_rx_bytes_total', inbound)).toBeGreaterThanOrEqual(6);
  expect(valueOf(s.families, 'registry_proxy_inbound_tx_bytes_total', inbound)).toBeGreaterThanOrEqual(12);
  expect(valueOf(s.families, 'registry_proxy_upstream_rx_bytes_total', upstream)).toBeGreaterThanOrEqual(6);
  expect(valueOf(s.families, 'registry_proxy_upstream_tx_bytes_total', upstream)).toBeGreaterThanOrEqual(12);
  expect(valueOf(s.families, 'registry_proxy_inbound_refused_total', inbound)).toBe(0);

  // A deny intention: the next connection is refused and counted as such.
  expect((await http(a.url, 'POST', '/v1/connect/intentions', { SourceName: 'web', DestinationName: 'db', Action: 'deny' })).status).toBe(200);
  await waitFor(async () => (await roundTrip(up, 'no', 1000)) === null, 20_000, 200);
  // Not TLS at all on the public port: a failed handshake, counted as an error.
  const dbPublic = a.agent.local!.service('db-proxy')!.service.Port!;
  await new Promise<void>((resolve) => {
    const c = connect({ host: '127.0.0.1', port: dbPublic }, () => c.end('GET / HTTP/1.0\r\n\r\n'));
    c.on('error', () => resolve());
    c.on('close', () => resolve());
    c.resume();
  });
  await waitFor(async () => {
    s = await scrape(a.url);
    return (valueOf(s.families, 'registry_proxy_inbound_refused_total', inbound) ?? 0) >= 1 && (valueOf(s.families, 'registry_proxy_inbound_errors_total', inbound) ?? 0) >= 1;
  }, 10_000, 200);
  expect(valueOf(s.families, 'registry_proxy_inbound_conns', inbound)).toBe(0);
}, 90_000);

async function proxyMetrics(port: number): Promise<Families> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  return parsePrometheusTextFormat(await res.text());
}

test('a proxy the agent does not run serves the same series at its prometheus_bind_addr (Config or flag)', async () => {
  const [apiPort, apiProxy, cliProxy, up, apiMetrics, cliMetrics] = (await freePorts(6)) as number[];
  servers.push(await echoServer(apiPort!, 'api:'));
  expect((await reg({ Name: 'api', Port: apiPort, Connect: { SidecarService: { Port: apiProxy, Proxy: { Config: { prometheus_bind_addr: `127.0.0.1:${apiMetrics}` } } } } })).status).toBe(200);
  expect((await reg({ Name: 'cli', Port: 1, Connect: { SidecarService: { Port: cliProxy, Proxy: { Upstreams: [{ DestinationName: 'api', LocalBindPort: up }] } } } })).status).toBe(200);
  const addr = ['-http-addr', `127.0.0.1:${a.agent.httpPort}`];
  proxies.push(spawnProxy(['-sidecar-for', 'api', ...addr], join(dir, 'api.log')));
  proxies.push(spawnProxy(['-sidecar-for', 'cli', '-prometheus-bind-addr', `127.0.0.1:${cliMetrics}`, ...addr], join(dir, 'cli.log')));
  await waitFor(async () => (await roundTrip(up!, 'ping', 1000)) === 'api:ping', 40_000, 200);

  const apiSide = await proxyMetrics(apiMetrics!);
  expect(typeOf(apiSide, 'registry_proxy_inbound_accepted_total')).toBe('COUNTER');
  expect(valueOf(apiSide, 'registry_proxy_inbound_accepted_total', { dst: 'api' })).toBeGreaterThanOrEqual(1);
  expect(valueOf(apiSide, 'registry_proxy_inbound_rx_bytes_total', { dst: 'api' })).toBeGreaterThanOrEqual(4);
  const cliSide = await proxyMetrics(cliMetrics!);
  expect(valueOf(cliSide, 'registry_proxy_upstream_accepted_total', { src: 'cli', dst_type: 'service', dst: 'api' })).toBeGreaterThanOrEqual(1);
  expect(valueOf(cliSide, 'registry_proxy_upstream_tx_bytes_total', { src: 'cli', dst_type: 'service', dst: 'api' })).toBeGreaterThanOrEqual(8);
  expect(valueOf(cliSide, 'registry_proxy_upstream_conns', { src: 'cli', dst_type: 'service', dst: 'api' })).toBe(0);
}, 90_000);
