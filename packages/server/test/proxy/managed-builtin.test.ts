// Issue #27: a managed proxy with no Command runs the built-in proxy (as Consul 1.4 runs
// `consul connect proxy` for it): two services talk through their managed proxies, and a proxy
// that is killed is started again by the agent and carries traffic again.
import type { Server } from 'node:net';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { freePorts } from '../support/ports';
import { echoServer, roundTrip, freeRange } from './mesh-support';

let a: TestAgent;
const servers: Server[] = [];

let dbPort: number;
let up: number;
beforeAll(async () => {
  const base = await freeRange();
  [dbPort, up] = (await freePorts(2)) as [number, number];
  a = await startDevAgent((c) => {
    c.connect.proxy.allowManagedApiRegistration = true;
    c.connect.proxyPorts = { min: base, max: base + 1 };
  });
  servers.push(await echoServer(dbPort, 'db:'));
}, 60_000);

afterAll(async () => {
  for (const s of servers) s.close();
  await a?.stop();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('managed proxies with no Command carry traffic; a killed one is restarted and carries it again; deregistering stops it', async () => {
  const reg = (body: unknown) => http(a.url, 'PUT', '/v1/agent/service/register', body);
  expect((await reg({ Name: 'db', Port: dbPort, Connect: { Proxy: {} } })).status).toBe(200);
  expect((await reg({ Name: 'web', Port: 1, Connect: { Proxy: { Upstreams: [{ DestinationName: 'db', LocalBindPort: up }] } } })).status).toBe(200);
  const proxies = a.agent.proxies!;
  await waitFor(() => proxies.pid('db-proxy') !== undefined && proxies.pid('web-proxy') !== undefined, 10_000);
  await waitFor(async () => (await roundTrip(up, 'hi', 1000)) === 'db:hi', 30_000, 200);

  const first = proxies.pid('db-proxy')!;
  process.kill(first, 'SIGKILL');
  await waitFor(() => proxies.pid('db-proxy') !== undefined && proxies.pid('db-proxy') !== first, 10_000);
  expect(proxies.restarts('db-proxy')).toBeGreaterThanOrEqual(1);
  await waitFor(async () => (await roundTrip(up, 'again', 1000)) === 'db:again', 30_000, 200);

  const pids = [proxies.pid('db-proxy')!, proxies.pid('web-proxy')!];
  expect((await http(a.url, 'PUT', '/v1/agent/service/deregister/db')).status).toBe(200);
  expect((await http(a.url, 'PUT', '/v1/agent/service/deregister/web')).status).toBe(200);
  await waitFor(() => pids.every((p) => !alive(p)), 10_000);
}, 90_000);
