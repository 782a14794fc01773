// `registry connect proxy` configured by flags (Consul 1.4's -service/-service-addr/-listen/
// -upstream/-register), its usage errors, and `registry connect ca get-config|set-config`.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { freePorts } from '../support/ports';
import { CLI } from '../support/processes';
import { echoServer, roundTrip, spawnProxy, type ProxyProcess } from './mesh-support';

let a: TestAgent;
let dir: string;
const servers: Server[] = [];
const proxies: ProxyProcess[] = [];
let addr: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-proxy-flags-'));
  a = await startDevAgent();
  addr = ['-http-addr', `127.0.0.1:${a.agent.httpPort}`];
});
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.stop()));
  for (const s of servers) s.close();
  await a?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI as its own process, not waited on synchronously: the agent answering it runs in this one. */
const cli = (args: string[]) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });

test('-service with -listen/-service-addr/-register and -service with -upstream carry traffic; the registration goes when the proxy stops', async () => {
  const [echoPort, listen, up] = (await freePorts(3)) as [number, number, number];
  servers.push(await echoServer(echoPort, 'pg:'));
  const pg = spawnProxy(['-service', 'pg', '-service-addr', `127.0.0.1:${echoPort}`, '-listen', `127.0.0.1:${listen}`, '-register', ...addr], join(dir, 'pg.log'));
  proxies.push(pg);
  proxies.push(spawnProxy(['-service', 'app', '-upstream', `pg:${up}`, ...addr], join(dir, 'app.log')));
  // Registered as pg-proxy, a connect-proxy for pg with a TTL check the proxy keeps passing.
  await waitFor(async () => (await http(a.url, 'GET', '/v1/health/connect/pg?passing')).json.length === 1, 30_000, 100);
  const svc = (await http(a.url, 'GET', '/v1/agent/service/pg-proxy')).json;
  expect(svc).toMatchObject({ Kind: 'connect-proxy', Service: 'pg-proxy', Port: listen, Proxy: { DestinationServiceName: 'pg' } });
  await waitFor(async () => (await roundTrip(up, 'select', 1000)) === 'pg:select', 30_000, 200);
  // An upstream that is a prepared query (executed with ?connect=true for each connection).
  expect((await http(a.url, 'POST', '/v1/query', { Name: 'pgq', Service: { Service: 'pg' } })).status).toBe(200);
  const [viaQuery] = (await freePorts(1)) as [number];
  proxies.push(spawnProxy(['-service', 'app', '-upstream', `prepared_query.pgq:${viaQuery}`, ...addr], join(dir, 'app-query.log')));
  await waitFor(async () => (await roundTrip(viaQuery, 'query', 1000)) === 'pg:query', 30_000, 200);
  await pg.stop();
  await waitFor(async () => (await http(a.url, 'GET', '/v1/agent/service/pg-proxy')).status === 404, 10_000);
}, 90_000);

test.each([
  [['-sidecar-for', 'nothing'], 'No sidecar proxy registered for nothing'],
  [[], '-service or -proxy-id must be specified so that proxy can configure itself.'],
  [['-service', 'x', '-listen', '127.0.0.1:1'], '-service-addr must be specified with -listen'],
  [['-service', 'x', '-register'], '-register may only be specified with -service and -listen'],
  [['-service', 'x', '-upstream', 'db'], 'Upstream config should be of the form name:addr'],
])('connect proxy %j fails with exit 1: %s', async (args, message) => {
  const r = await cli(['connect', 'proxy', ...args, ...addr]);
  expect(r.status).toBe(1);
  expect(r.stdout + r.stderr).toContain(message);
});

test('connect ca get-config shows the configuration; set-config changes it (a rotation here)', async () => {
  const got = await cli(['connect', 'ca', 'get-config', ...addr]);
  expect(got.status).toBe(0);
  const cfg = JSON.parse(got.stdout);
  expect(cfg).toMatchObject({ Provider: 'registry', Config: { LeafCertTTL: '72h' } });
  const before = (await http(a.url, 'GET', '/v1/connect/ca/roots')).json.ActiveRootID;
  const file = join(dir, 'ca.json');
  writeFileSync(file, JSON.stringify({ Provider: 'registry', Config: cfg.Config, RotateRoot: true }));
  const set = await cli(['connect', 'ca', 'set-config', '-config-file', file, ...addr]);
  expect(set.stdout).toContain('Configuration updated!');
  expect(set.status).toBe(0);
  expect((await http(a.url, 'GET', '/v1/connect/ca/roots')).json.ActiveRootID).not.toBe(before);
  const missing = await cli(['connect', 'ca', 'set-config', ...addr]);
  expect(missing.status).toBe(1);
  expect(missing.stderr).toContain('The -config-file flag is required');
});
