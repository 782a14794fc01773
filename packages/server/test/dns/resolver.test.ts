// The DNS interface through Node's own stub resolver (c-ares: dns.promises.Resolver), which needs
// no tool installed: A, SRV, TTLs, NXDOMAIN, the TCP retry of a truncated answer; and the port
// settings (-1 disables, -dns-port, dns_config validation).
import { promises as dnsPromises } from 'node:dns';
import { applyConfigFile, buildConfig, defaultConfig } from '@registry/server';
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';
import { MASTER, startAclAgent, tokenWithRules } from '../acl/acl-agent';

let a: TestAgent;
let resolver: dnsPromises.Resolver;

beforeAll(async () => {
  a = await startDevAgent((c) => {
    c.dnsPort = 0;
    c.dnsPortSet = true;
  });
  resolver = new dnsPromises.Resolver({ timeout: 3000, tries: 1 });
  resolver.setServers([`127.0.0.1:${a.agent.dnsPort}`]);
  const reg = (body: unknown) => http(a.url, 'PUT', '/v1/catalog/register', body);
  await reg({ Node: 'r1', Address: '10.5.0.1', Service: { Service: 'api', Port: 9001 } });
  await reg({ Node: 'r2', Address: '10.5.0.2', Service: { Service: 'api', Port: 9002 }, Check: { CheckID: 'c', Name: 'c', Status: 'critical', ServiceID: 'api' } });
  for (let i = 0; i < 60; i++) await reg({ Node: `m${i}`, Address: `10.6.0.${i + 1}`, Service: { Service: 'many', Port: 1 } });
  await http(a.url, 'POST', '/v1/query', { Name: 'apiq', Service: { Service: 'api' }, DNS: { TTL: '17s' } });
});
afterAll(async () => {
  await a?.stop();
});

test('A records of the healthy instances', async () => {
  expect(await resolver.resolve4('api.service.registry')).toEqual(['10.5.0.1']);
});

test('SRV records', async () => {
  expect(await resolver.resolveSrv('api.service.registry')).toEqual([{ name: 'r1.node.dc1.registry', port: 9001, priority: 1, weight: 1 }]);
});

test('a prepared query with its TTL', async () => {
  expect(await resolver.resolve4('apiq.query.registry', { ttl: true })).toEqual([{ address: '10.5.0.1', ttl: 17 }]);
});

test('NXDOMAIN is ENOTFOUND', async () => {
  await expect(resolver.resolve4('missing.service.registry')).rejects.toMatchObject({ code: 'ENOTFOUND' });
});

test('a truncated UDP answer is retried over TCP and comes back whole', async () => {
  const all = await resolver.resolve4('many.service.registry');
  expect(all.length).toBeGreaterThanOrEqual(3);
  // c-ares asks without EDNS (3 answers, no TC) or with it (TC, then TCP: all 60).
  expect([3, 60]).toContain(all.length);
});

test('ACLs apply with the agent\'s default token (DNS carries none)', async () => {
  const acl = await startAclAgent({ defaultPolicy: 'deny', patch: (c) => Object.assign(c, { dnsPort: 0, dnsPortSet: true }) });
  try {
    await acl.as(MASTER, 'PUT', '/v1/catalog/register', { Node: 'n1', Address: '10.7.0.1', Service: { Service: 'web', Port: 80 } });
    const r = new dnsPromises.Resolver({ timeout: 3000, tries: 1 });
    r.setServers([`127.0.0.1:${acl.agent.dnsPort}`]);
    await expect(r.resolve4('web.service.registry')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(r.resolve4('n1.node.registry')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    const reader = await tokenWithRules(acl, 'dns-reader', 'service "web" { policy = "read" }\nnode_prefix "" { policy = "read" }');
    acl.agent.config.acl.tokens.default = reader.secret;
    expect(await r.resolve4('web.service.registry')).toEqual(['10.7.0.1']);
    expect(await r.resolve4('n1.node.registry')).toEqual(['10.7.0.1']);
  } finally {
    await acl.stop();
  }
});

describe('ports.dns', () => {
  test('-1 disables DNS', async () => {
    const off = await startDevAgent((c) => {
      c.dnsPort = -1;
    });
    try {
      expect(off.agent.dnsPort).toBe(0);
    } finally {
      await off.stop();
    }
  });

  test('8600 by default; -dns-port and ports.dns set it; out of range is refused', () => {
    expect(defaultConfig().dnsPort).toBe(8600);
    expect(defaultConfig().dnsPortSet).toBe(false);
    expect(buildConfig({ dev: true, dnsPort: 8653 })).toMatchObject({ dnsPort: 8653, dnsPortSet: true });
    expect(buildConfig({ dev: true, dnsPort: -1 }).dnsPort).toBe(-1);
    expect(applyConfigFile(defaultConfig(), { ports: { dns: 53 } })).toMatchObject({ dnsPort: 53, dnsPortSet: true });
    expect(() => buildConfig({ dev: true, dnsPort: -2 })).toThrow('invalid -dns-port -2');
    expect(() => applyConfigFile(defaultConfig(), { ports: { dns: 'x' } })).toThrow('ports.dns must be an integer');
  });

  test('dns_config is read and checked', () => {
    const c = applyConfigFile(defaultConfig(), { domain: 'Example.', dns_config: { max_stale: '5s', service_ttl: { 'db*': '3s' }, udp_answer_limit: 5 } }, 'f.json');
    expect(c.dns).toMatchObject({ domain: 'example', maxStaleMs: 5000, serviceTtlS: { 'db*': 3 }, udpAnswerLimit: 5, allowStale: true });
    expect(() => applyConfigFile(defaultConfig(), { dns_config: { node_ttl: 'soon' } }, 'f.json')).toThrow('f.json: dns_config.node_ttl must be a duration');
    expect(() => applyConfigFile(defaultConfig(), { dns_config: { udp_answer_limit: 0 } }, 'f.json')).toThrow('udp_answer_limit must be an integer ≥ 1');
  });
});
