// The DNS interface's pure parts: names, records, TTLs, trimming.
import type { CheckServiceNodeOut } from '@registry/store';
import { healthy, serviceAddressAnswers, serviceSrvAnswers, weightOf, type AnswerContext } from '../../src/dns/answers';
import { encodingLength, type DataRecord, type Packet } from '../../src/dns/codec';
import { defaultDnsConfig, serviceTtlS } from '../../src/dns/config';
import { hexOfIp, ipOfHex, parseLabels, placeName } from '../../src/dns/names';
import { trimTcp, trimUdp } from '../../src/dns/trim';

describe('names', () => {
  const parse = (name: string, srv = false) => {
    const p = placeName(name, 'registry');
    return p.at === 'below' ? parseLabels(p.labels, srv) : p.at;
  };

  test('placement against the domain', () => {
    expect(parse('example.com')).toBe('outside');
    expect(parse('Registry.')).toBe('apex');
    expect(parse('notregistry')).toBe('outside');
  });

  test('services, tags, datacenters, RFC 2782', () => {
    expect(parse('Web.Service.Registry.')).toEqual({ kind: 'service', service: 'web', tag: '', datacenter: undefined });
    expect(parse('v1.web.service.dc2.registry')).toEqual({ kind: 'service', service: 'web', tag: 'v1', datacenter: 'dc2' });
    expect(parse('a.b.web.service.registry')).toEqual({ kind: 'service', service: 'web', tag: 'a.b', datacenter: undefined });
    expect(parse('_web._tcp.service.registry')).toEqual({ kind: 'service', service: 'web', tag: '', datacenter: undefined });
    expect(parse('_web._v1.service.dc1.registry')).toEqual({ kind: 'service', service: 'web', tag: 'v1', datacenter: 'dc1' });
    expect(parse('_web._tcp.registry', true)).toEqual({ kind: 'service', service: 'web', tag: '', datacenter: undefined });
    expect(parse('_web._tcp.dc3.registry', true)).toEqual({ kind: 'service', service: 'web', tag: '', datacenter: 'dc3' });
  });

  test('nodes, queries, addresses; invalid names', () => {
    expect(parse('my.host.node.registry')).toEqual({ kind: 'node', node: 'my.host', datacenter: undefined });
    expect(parse('q1.query.dc1.registry')).toEqual({ kind: 'query', query: 'q1', datacenter: 'dc1' });
    expect(parse('0a000001.addr.dc1.registry')).toEqual({ kind: 'addr', ip: '10.0.0.1', datacenter: 'dc1' });
    for (const bad of ['service.registry', 'node.registry', 'x.y.z.registry', 'web.service.dc1.more.registry', 'zz.addr.registry', 'a..b.service.registry']) {
      expect(parse(bad)).toEqual({ kind: 'invalid' });
    }
  });

  test('hex addresses both ways', () => {
    expect(hexOfIp('10.9.9.9')).toBe('0a090909');
    expect(hexOfIp('fd00::6')).toBe('fd000000000000000000000000000006');
    expect(hexOfIp('::ffff:1.2.3.4')).toBe('00000000000000000000ffff01020304');
    expect(ipOfHex('fd000000000000000000000000000006')).toBe('fd00:0:0:0:0:0:0:6');
  });
});

function instance(node: string, address: string, opts: { svcAddress?: string; port?: number; statuses?: string[]; weights?: { Passing: number; Warning: number } } = {}): CheckServiceNodeOut {
  return {
    Node: { ID: '', Node: node, Address: address, Datacenter: 'dc1', TaggedAddresses: null, Meta: null, CreateIndex: 1, ModifyIndex: 1 },
    Service: {
      ID: 'web', Service: 'web', Tags: [], Address: opts.svcAddress ?? '', Meta: {}, Port: opts.port ?? 80,
      Weights: opts.weights ?? { Passing: 1, Warning: 1 }, EnableTagOverride: false, ProxyDestination: '', Proxy: {}, Connect: {}, CreateIndex: 1, ModifyIndex: 1,
    },
    Checks: (opts.statuses ?? []).map((Status, i) => ({
      Node: node, CheckID: `c${i}`, Name: 'c', Status, Notes: '', Output: '', ServiceID: 'web', ServiceName: 'web', ServiceTags: [], Definition: {}, CreateIndex: 1, ModifyIndex: 1,
    })),
  };
}

const ctx: AnswerContext = { domain: 'registry', localDc: 'dc1', translateWanAddrs: false };

describe('answers', () => {
  test('health: critical never; warning unless only passing', () => {
    const nodes = [instance('a', '1.1.1.1', { statuses: ['passing'] }), instance('b', '1.1.1.2', { statuses: ['warning'] }), instance('c', '1.1.1.3', { statuses: ['passing', 'critical'] })];
    expect(healthy(nodes, false).map((n) => n.Node.Node)).toEqual(['a', 'b']);
    expect(healthy(nodes, true).map((n) => n.Node.Node)).toEqual(['a']);
  });

  test('A answers: one per distinct address, CNAME only when no instance has an IP', () => {
    const nodes = [instance('a', '1.1.1.1'), instance('b', '1.1.1.1'), instance('c', '1.1.1.3', { svcAddress: 'db.example.com' })];
    expect(serviceAddressAnswers('web.service.registry', 'A', nodes, 0, ctx).map((r) => r.data)).toEqual(['1.1.1.1']);
    expect(serviceAddressAnswers('web.service.registry', 'A', [nodes[2]], 0, ctx)).toEqual([{ type: 'CNAME', name: 'web.service.registry', ttl: 0, class: 'IN', data: 'db.example.com' }]);
  });

  test('SRV weights follow Weights.Passing / Weights.Warning', () => {
    expect(weightOf(instance('a', '1.1.1.1', { statuses: ['warning'], weights: { Passing: 10, Warning: 2 } }))).toBe(2);
    expect(weightOf(instance('a', '1.1.1.1', { statuses: ['passing'], weights: { Passing: 10, Warning: 2 } }))).toBe(10);
    const { answers, additionals } = serviceSrvAnswers('web.service.registry', [instance('a', '1.1.1.1', { port: 1 }), instance('a', '1.1.1.1', { port: 2 })], 0, 'dc1', ctx);
    expect(answers).toHaveLength(2);
    expect(additionals).toHaveLength(1);
  });

  test('service_ttl: exact, longest prefix, then 0', () => {
    const cfg = { ...defaultDnsConfig(), serviceTtlS: { '*': 1, 'db*': 2, 'db-main': 3 } };
    expect(serviceTtlS(cfg, 'DB-Main')).toBe(3);
    expect(serviceTtlS(cfg, 'db-replica')).toBe(2);
    expect(serviceTtlS(cfg, 'web')).toBe(1);
    expect(serviceTtlS(defaultDnsConfig(), 'web')).toBe(0);
  });
});

describe('trimming', () => {
  const query = (udpPayloadSize?: number): Packet => ({
    id: 1, type: 'query', flags: 0, questions: [{ name: 'web.service.registry', type: 'SRV' }], answers: [], authorities: [],
    additionals: udpPayloadSize ? [{ type: 'OPT', name: '.', udpPayloadSize, options: [] }] : [],
  });
  const response = (n: number): { resp: Packet; extras: DataRecord[] } => {
    const nodes = Array.from({ length: n }, (_, i) => instance(`node-${i}`, `10.0.${i >> 8}.${i & 255}`, { port: 1000 + i }));
    const { answers, additionals } = serviceSrvAnswers('web.service.registry', nodes, 0, 'dc1', ctx);
    return { resp: { id: 1, type: 'response', flags: 0, questions: query().questions, answers, authorities: [], additionals }, extras: additionals };
  };

  test('UDP without EDNS: the answer limit, then 512 bytes, extras following their answers', () => {
    const { resp, extras } = response(50);
    const cut = trimUdp(query(), resp, 3, extras);
    expect(cut.byLimit).toBe(true);
    expect(resp.answers.length).toBeLessThanOrEqual(3);
    expect(encodingLength(resp)).toBeLessThanOrEqual(512);
    expect(resp.additionals).toHaveLength(resp.answers.length);
  });

  test('UDP with EDNS: no answer limit, the advertised size', () => {
    const { resp, extras } = response(200);
    const cut = trimUdp(query(4096), resp, 3, extras);
    expect(cut).toEqual({ bySize: true, byLimit: false });
    expect(encodingLength(resp)).toBeLessThanOrEqual(4096);
    expect(encodingLength(resp)).toBeGreaterThan(3800);
  });

  test('TCP: everything that fits 64 KiB', () => {
    const { resp, extras } = response(200);
    expect(trimTcp(resp, extras, true)).toEqual({ bySize: false, byLimit: false });
    expect(resp.answers).toHaveLength(200);
  });
});
