// The built-in proxy under ACLs (default deny): each sidecar runs with a token of its own service's
// rights (service:write on it, read on what it needs), as Consul's docs set them up; traffic flows,
// and a proxy whose token may not write its service cannot get a leaf and fails at start.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MASTER, startAclAgent, tokenWithRules, type AclAgent } from '../acl/acl-agent';
import { waitFor } from '../support/dev-agent';
import { freePorts } from '../support/ports';
import { echoServer, roundTrip, spawnProxy, type ProxyProcess } from './mesh-support';

let a: AclAgent;
let dir: string;
const servers: Server[] = [];
const proxies: ProxyProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-proxy-acl-'));
  a = await startAclAgent({ defaultPolicy: 'deny' });
}, 60_000);
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.stop()));
  for (const s of servers) s.close();
  await a?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const rules = (svc: string) => `service "${svc}" { policy = "write" }\nservice "${svc}-sidecar-proxy" { policy = "write" }\nservice_prefix "" { policy = "read" }\nnode_prefix "" { policy = "read" }`;

test('sidecars with their own services\' tokens carry traffic; a token without service:write on its service fails the proxy', async () => {
  const [echoPort, dbProxy, webProxy, up] = (await freePorts(4)) as [number, number, number, number];
  servers.push(await echoServer(echoPort, 'db:'));
  const reg = (body: unknown) => a.as(MASTER, 'PUT', '/v1/agent/service/register', body);
  expect((await reg({ Name: 'db', Port: echoPort, Connect: { SidecarService: { Port: dbProxy } } })).status).toBe(200);
  expect((await reg({ Name: 'web', Port: 1, Connect: { SidecarService: { Port: webProxy, Proxy: { Upstreams: [{ DestinationName: 'db', LocalBindPort: up }] } } } })).status).toBe(200);
  const dbToken = (await tokenWithRules(a, 'db-sidecar', rules('db'))).secret;
  const webToken = (await tokenWithRules(a, 'web-sidecar', rules('web'))).secret;
  // Default deny and no intention: web → db would be refused; allow it.
  expect((await a.as(MASTER, 'POST', '/v1/connect/intentions', { SourceName: 'web', DestinationName: 'db', Action: 'allow' })).status).toBe(200);
  const addr = ['-http-addr', a.url.replace('http://', '')];
  proxies.push(spawnProxy(['-sidecar-for', 'db', '-token', dbToken, ...addr], join(dir, 'db.log')));
  proxies.push(spawnProxy(['-sidecar-for', 'web', ...addr], join(dir, 'web.log'), { REGISTRY_HTTP_TOKEN: webToken }));
  await waitFor(async () => (await roundTrip(up, 'secret', 1000)) === 'db:secret', 40_000, 200);

  const readOnly = (await tokenWithRules(a, 'reader', 'service_prefix "" { policy = "read" }\nnode_prefix "" { policy = "read" }')).secret;
  const bad = spawnProxy(['-sidecar-for', 'db', '-token', readOnly, ...addr], join(dir, 'bad.log'));
  proxies.push(bad);
  expect(await Promise.race([bad.exited, new Promise((r) => setTimeout(() => r('running'), 20_000))])).toBe(1);
}, 90_000);
