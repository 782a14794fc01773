// The DNS interface asked with a real resolver tool (dig) against in-process dev agents: service
// A and SRV answers with only healthy instances, tags, the RFC 2782 form, nodes, prepared queries
// with their TTL, NXDOMAIN with the SOA, UDP truncation (TC) and TCP answering everything, and
// the dns_config knobs (udp_answer_limit, enable_truncate, only_passing, TTLs).
import { applyConfigFile } from '@registry/server';
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';
import { dig, digMissing, type DigRecord } from './dig';

const missing = digMissing();
if (missing) console.log(`SKIPPED: ${missing}`);
const withDig = missing ? describe.skip : describe;

const BIG = 80;

async function register(a: TestAgent, node: string, address: string, service: Record<string, unknown>, status?: string, meta?: Record<string, string>): Promise<void> {
  const id = (service.ID as string | undefined) ?? (service.Service as string);
  const body: Record<string, unknown> = { Node: node, Address: address, Service: service, NodeMeta: meta };
  if (status) body.Check = { CheckID: `${id}-check`, Name: `${id} check`, Status: status, ServiceID: id };
  const r = await http(a.url, 'PUT', '/v1/catalog/register', body);
  if (r.status !== 200) throw new Error(`register ${node}: ${r.status} ${r.text}`);
}

/** web: n1 passing (tag v1), n2 warning (tag v2, own address), n3 critical (tag v1). */
async function registerWeb(a: TestAgent): Promise<void> {
  await register(a, 'n1', '10.0.0.1', { Service: 'web', Port: 80, Tags: ['v1', 'primary'] }, 'passing', { rack: 'r1' });
  await register(a, 'n2', '10.0.0.2', { Service: 'web', Port: 81, Tags: ['v2'], Address: '10.9.9.9' }, 'warning');
  await register(a, 'n3', '10.0.0.3', { Service: 'web', Port: 82, Tags: ['v1'] }, 'critical');
}

const datas = (rs: DigRecord[]) => rs.map((r) => r.data).sort();

withDig('DNS with dig, default dns_config', () => {
  let a: TestAgent;
  let port: number;

  beforeAll(async () => {
    a = await startDevAgent((c) => Object.assign(c, applyConfigFile(c, { ports: { dns: 0 } })));
    port = a.agent.dnsPort;
    await registerWeb(a);
    await register(a, 'n6', 'fd00::6', { Service: 'v6svc', Port: 90 });
    for (let i = 0; i < BIG; i++) await register(a, `b${i}`, `10.1.${i >> 8}.${i & 255}`, { Service: 'big', Port: 8000 });
    const q = await http(a.url, 'POST', '/v1/query', { Name: 'webq', Service: { Service: 'web' }, DNS: { TTL: '42s' } });
    expect(q.status).toBe(200);
  });
  afterAll(async () => {
    await a?.stop();
  });

  test('listens on the port it was given (0: a free one, UDP and TCP alike)', () => {
    expect(port).toBeGreaterThan(0);
  });

  test('service A: healthy instances only (passing and warning), the service address before the node address', async () => {
    const r = await dig(port, 'web.service.registry');
    expect(r.status).toBe('NOERROR');
    expect(r.flags).toContain('aa');
    expect(datas(r.answer)).toEqual(['10.0.0.1', '10.9.9.9']);
    expect(r.answer.every((x) => x.type === 'A' && x.name === 'web.service.registry.' && x.ttl === 0)).toBe(true);
  });

  test('service SRV: port, priority 1, weight, target node names, their A records in the additional section', async () => {
    const r = await dig(port, 'web.service.registry', 'SRV');
    expect(r.status).toBe('NOERROR');
    expect(datas(r.answer)).toEqual(['1 1 80 n1.node.dc1.registry.', '1 1 81 0a090909.addr.dc1.registry.']);
    expect(r.additional.filter((x) => x.type === 'A').map((x) => `${x.name} ${x.data}`).sort()).toEqual([
      '0a090909.addr.dc1.registry. 10.9.9.9',
      'n1.node.dc1.registry. 10.0.0.1',
    ]);
  });

  test('a tag filters: <tag>.<service>.service', async () => {
    expect(datas((await dig(port, 'v1.web.service.registry')).answer)).toEqual(['10.0.0.1']);
    expect(datas((await dig(port, 'v2.web.service.registry')).answer)).toEqual(['10.9.9.9']);
    expect((await dig(port, 'v9.web.service.registry')).status).toBe('NXDOMAIN');
  });

  test('RFC 2782: _service._tag.service and _service._tcp.service (no tag filter), with the datacenter', async () => {
    expect(datas((await dig(port, '_web._v2.service.registry', 'SRV')).answer)).toEqual(['1 1 81 0a090909.addr.dc1.registry.']);
    expect((await dig(port, '_web._tcp.service.dc1.registry', 'SRV')).answer).toHaveLength(2);
    expect((await dig(port, '_web._tcp.registry', 'SRV')).answer).toHaveLength(2);
  });

  test('the datacenter label: this one answers, an unknown one is NXDOMAIN', async () => {
    expect(datas((await dig(port, 'web.service.dc1.registry')).answer)).toEqual(['10.0.0.1', '10.9.9.9']);
    expect((await dig(port, 'web.service.nowhere.registry')).status).toBe('NXDOMAIN');
    expect((await dig(port, 'web.service.dc1.extra.registry')).status).toBe('NXDOMAIN');
  });

  test('AAAA: an IPv6 node address; an IPv4-only service has no AAAA (NOERROR, SOA)', async () => {
    expect(datas((await dig(port, 'v6svc.service.registry', 'AAAA')).answer)).toEqual(['fd00::6']);
    const none = await dig(port, 'web.service.registry', 'AAAA');
    expect(none.status).toBe('NOERROR');
    expect(none.answer).toEqual([]);
    expect(none.authority.map((x) => x.type)).toEqual(['SOA']);
  });

  test('node lookup: A, with or without the datacenter; TXT carries its meta', async () => {
    expect(datas((await dig(port, 'n1.node.registry')).answer)).toEqual(['10.0.0.1']);
    expect(datas((await dig(port, 'n1.node.dc1.registry')).answer)).toEqual(['10.0.0.1']);
    expect(datas((await dig(port, 'n1.node.registry', 'TXT')).answer)).toEqual(['"rack=r1"']);
    expect((await dig(port, 'nobody.node.registry')).status).toBe('NXDOMAIN');
  });

  test('prepared query by name: its instances with the query\'s DNS TTL; SRV too', async () => {
    const r = await dig(port, 'webq.query.registry');
    expect(r.status).toBe('NOERROR');
    expect(datas(r.answer)).toEqual(['10.0.0.1', '10.9.9.9']);
    expect(r.answer.every((x) => x.ttl === 42)).toBe(true);
    const srv = await dig(port, 'webq.query.registry', 'SRV');
    expect(srv.answer.map((x) => x.ttl)).toEqual([42, 42]);
    expect((await dig(port, 'no-such-query.query.registry')).status).toBe('NXDOMAIN');
  });

  test('prepared query by id; EDNS client subnet echoed with its scope', async () => {
    const list = await http(a.url, 'GET', '/v1/query');
    const id = list.json.find((q: { Name: string }) => q.Name === 'webq').ID;
    expect(datas((await dig(port, `${id}.query.registry`)).answer)).toEqual(['10.0.0.1', '10.9.9.9']);
    const r = await dig(port, 'webq.query.registry', 'A', '+subnet=10.0.0.0/24');
    expect(r.raw).toMatch(/CLIENT-SUBNET: 10\.0\.0\.0\/24\/24/);
  });

  test('NXDOMAIN carries the SOA in the authority section', async () => {
    const r = await dig(port, 'nope.service.registry');
    expect(r.status).toBe('NXDOMAIN');
    expect(r.flags).toContain('aa');
    expect(r.answer).toEqual([]);
    expect(r.authority).toHaveLength(1);
    expect(r.authority[0].type).toBe('SOA');
    expect(r.authority[0].data).toMatch(/^ns\.registry\. hostmaster\.registry\. \d+ 3600 600 86400 0$/);
    expect((await dig(port, 'what.registry')).status).toBe('NXDOMAIN');
  });

  test('the zone apex answers its SOA and NS; other names are refused (no recursion)', async () => {
    expect((await dig(port, 'registry', 'SOA')).answer.map((x) => x.type)).toEqual(['SOA']);
    expect(datas((await dig(port, 'registry', 'NS')).answer)).toEqual(['ns.registry.']);
    const r = await dig(port, 'example.com');
    expect(r.status).toBe('REFUSED');
    expect(r.flags).not.toContain('ra');
  });

  test('UDP: more answers than fit the EDNS size are cut and TC is set', async () => {
    const r = await dig(port, 'big.service.registry', 'A', '+notcp', '+ignore');
    expect(r.transport).toBe('UDP');
    expect(r.flags).toContain('tc');
    expect(r.answer.length).toBeGreaterThan(3);
    expect(r.answer.length).toBeLessThan(BIG);
    const srv = await dig(port, 'big.service.registry', 'SRV', '+notcp', '+ignore');
    expect(srv.flags).toContain('tc');
    // Every SRV answer kept has its target's address, and no address is left without its SRV.
    const targets = srv.answer.map((x) => x.data.split(' ')[3]).sort();
    expect(srv.additional.filter((x) => x.type === 'A').map((x) => x.name).sort()).toEqual(targets);
  });

  test('UDP without EDNS: 512 bytes and udp_answer_limit (3) answers, without TC by default', async () => {
    const r = await dig(port, 'big.service.registry', 'A', '+noedns', '+notcp', '+ignore');
    expect(r.answer).toHaveLength(3);
    expect(r.flags).not.toContain('tc');
  });

  test('TCP returns every instance; dig retries a truncated UDP answer over TCP', async () => {
    const tcp = await dig(port, 'big.service.registry', 'A', '+tcp');
    expect(tcp.transport).toBe('TCP');
    expect(tcp.answer).toHaveLength(BIG);
    expect(new Set(tcp.answer.map((x) => x.data)).size).toBe(BIG);
    expect((await dig(port, 'big.service.registry', 'SRV', '+tcp')).answer).toHaveLength(BIG);
    const retried = await dig(port, 'big.service.registry');
    expect(retried.transport).toBe('TCP');
    expect(retried.answer).toHaveLength(BIG);
  });

  test('answers come in random order (Consul shuffles)', async () => {
    const orders = new Set<string>();
    for (let i = 0; i < 10; i++) orders.add((await dig(port, 'big.service.registry', 'A', '+tcp')).answer.map((x) => x.data).join(','));
    expect(orders.size).toBeGreaterThan(1);
  });

  test('a service that turns critical leaves the answer', async () => {
    await register(a, 'n1', '10.0.0.1', { Service: 'web', Port: 80, Tags: ['v1', 'primary'] }, 'critical', { rack: 'r1' });
    expect(datas((await dig(port, 'web.service.registry')).answer)).toEqual(['10.9.9.9']);
    await register(a, 'n1', '10.0.0.1', { Service: 'web', Port: 80, Tags: ['v1', 'primary'] }, 'passing', { rack: 'r1' });
    expect(datas((await dig(port, 'web.service.registry')).answer)).toEqual(['10.0.0.1', '10.9.9.9']);
  });
});

withDig('DNS with dig, tuned dns_config', () => {
  let a: TestAgent;
  let port: number;

  beforeAll(async () => {
    const file = {
      ports: { dns: 0 },
      dns_config: {
        only_passing: true,
        udp_answer_limit: 2,
        enable_truncate: true,
        allow_stale: false,
        node_ttl: '7s',
        service_ttl: { '*': '5s', web: '10s' },
      },
    };
    a = await startDevAgent((c) => Object.assign(c, applyConfigFile(c, file)));
    port = a.agent.dnsPort;
    await registerWeb(a);
    await register(a, 'n4', '10.0.0.4', { Service: 'web', Port: 83 }, 'passing');
    for (let i = 0; i < 5; i++) await register(a, `s${i}`, `10.3.0.${i + 1}`, { Service: 'small', Port: 1 });
  });
  afterAll(async () => {
    await a?.stop();
  });

  test('only_passing drops warning instances too', async () => {
    expect(datas((await dig(port, 'web.service.registry', 'A', '+tcp')).answer)).toEqual(['10.0.0.1', '10.0.0.4']);
  });

  test('service_ttl: the exact name, else the * wildcard; node_ttl for nodes', async () => {
    expect((await dig(port, 'web.service.registry')).answer.map((x) => x.ttl)).toEqual([10, 10]);
    expect((await dig(port, 'small.service.registry', 'A', '+tcp')).answer.every((x) => x.ttl === 5)).toBe(true);
    expect((await dig(port, 'n1.node.registry')).answer.map((x) => x.ttl)).toEqual([7]);
  });

  test('udp_answer_limit bounds a non-EDNS UDP answer; with enable_truncate it sets TC', async () => {
    const r = await dig(port, 'small.service.registry', 'A', '+noedns', '+notcp', '+ignore');
    expect(r.answer).toHaveLength(2);
    expect(r.flags).toContain('tc');
    expect((await dig(port, 'small.service.registry', 'A', '+noedns', '+tcp')).answer).toHaveLength(5);
  });
});
