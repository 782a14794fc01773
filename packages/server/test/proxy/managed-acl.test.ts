// Managed proxies under ACLs (default deny), as Consul 1.4 runs them: each gets its own random token
// (REGISTRY_PROXY_TOKEN) that the agent takes as the proxy itself on the leaf and proxy-config
// endpoints and, everywhere else, as the token its service was registered with — so a managed proxy
// with no Command finds its upstreams and authorizes inbound connections with its registrant's
// rights. A token that is not that proxy's is refused.
import type { Server } from 'node:net';
import { MASTER, startAclAgent, tokenWithRules, type AclAgent } from '../acl/acl-agent';
import { waitFor } from '../support/dev-agent';
import { freePorts } from '../support/ports';
import { echoServer, roundTrip, freeRange } from './mesh-support';

let a: AclAgent;
const servers: Server[] = [];

beforeAll(async () => {
  const base = await freeRange();
  a = await startAclAgent({
    defaultPolicy: 'deny',
    patch: (c) => {
      c.connect.proxy.allowManagedApiRegistration = true;
      c.connect.proxyPorts = { min: base, max: base + 1 };
    },
  });
}, 60_000);
afterAll(async () => {
  for (const s of servers) s.close();
  await a?.stop();
});

// What each service's registrant may do: write its service and its proxy, read what discovery reads.
const rules = (svc: string) => `service "${svc}" { policy = "write" }\nservice "${svc}-proxy" { policy = "write" }\nservice_prefix "" { policy = "read" }\nnode_prefix "" { policy = "read" }`;

test('two managed proxies with no Command carry traffic under default-deny ACLs; other tokens are refused', async () => {
  const [dbPort, up] = (await freePorts(2)) as [number, number];
  servers.push(await echoServer(dbPort, 'db:'));
  const dbToken = (await tokenWithRules(a, 'db-owner', rules('db'))).secret;
  const webToken = (await tokenWithRules(a, 'web-owner', rules('web'))).secret;
  expect((await a.as(dbToken, 'PUT', '/v1/agent/service/register', { Name: 'db', Port: dbPort, Connect: { Proxy: {} } })).status).toBe(200);
  expect((await a.as(webToken, 'PUT', '/v1/agent/service/register', { Name: 'web', Port: 1, Connect: { Proxy: { Upstreams: [{ DestinationName: 'db', LocalBindPort: up }] } } })).status).toBe(200);
  expect((await a.as(MASTER, 'POST', '/v1/connect/intentions', { SourceName: 'web', DestinationName: 'db', Action: 'allow' })).status).toBe(200);

  // web-proxy looks up db with web's registration token, db-proxy authorizes web with db's.
  await waitFor(async () => (await roundTrip(up, 'hi', 1000)) === 'db:hi', 40_000, 200);

  const mesh = a.agent.local!;
  const webProxyToken = mesh.service('web-proxy')!.managed!.token;
  const dbProxyToken = mesh.service('db-proxy')!.managed!.token;
  // The proxy token stands for web's registrant on discovery reads...
  const found = await a.as(webProxyToken, 'GET', '/v1/health/connect/db?passing');
  expect(found.status).toBe(200);
  expect(found.json.map((e: any) => e.Service.ID)).toEqual(['db-proxy']);
  // ...but only for its own service on the proxy's endpoints.
  expect((await a.as(webProxyToken, 'GET', '/v1/agent/connect/ca/leaf/db')).status).toBe(403);
  expect((await a.as(webProxyToken, 'GET', '/v1/agent/connect/proxy/db-proxy')).status).toBe(403);
  expect((await a.as(dbProxyToken, 'GET', '/v1/agent/connect/proxy/db-proxy')).status).toBe(200);
  expect((await a.as(webProxyToken, 'POST', '/v1/agent/connect/authorize', { Target: 'db', ClientCertURI: 'spiffe://x.registry/ns/default/dc/dc1/svc/web', ClientCertSerial: '01' })).status).toBe(403);
  // A token no one issued is refused everywhere a token is needed.
  const wrong = '00000000-0000-4000-8000-00000000dead';
  expect((await a.as(wrong, 'GET', '/v1/health/connect/db?passing')).status).toBe(403);
  expect((await a.as(wrong, 'GET', '/v1/agent/connect/proxy/web-proxy')).status).toBe(403);
  expect((await a.as(wrong, 'GET', '/v1/agent/connect/ca/leaf/web')).status).toBe(403);
  // A deregistered service's proxy token stands for nothing any more.
  expect((await a.as(webToken, 'PUT', '/v1/agent/service/deregister/web')).status).toBe(200);
  expect((await a.as(webProxyToken, 'GET', '/v1/health/connect/db?passing')).status).toBe(403);
}, 90_000);
