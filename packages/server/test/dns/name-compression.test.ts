// Answers use name compression (RFC 1035 §4.1.4) as Consul's do (issue #30): owner names and the
// names inside NS/CNAME/SOA RDATA are pointers to earlier occurrences, SRV targets are written out
// (RFC 2782) but may be pointed into. Asked with dig (a real resolver decodes the same records,
// in fewer bytes) and with raw queries whose answers dns-packet decodes and whose every pointer is
// checked here, and a large SRV set holds more records in a 512-byte UDP answer before TC.
import { applyConfigFile } from '@registry/server';
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';
import { dig, digMissing, type DigAnswer } from './dig';
import { decode, query, tcpQuery, udpQuery } from './support/dns-process';

const missing = digMissing();
if (missing) console.log(`SKIPPED: ${missing}`);
const withDig = missing ? describe.skip : describe;

const TEN = 10;
const MANY = 40;

// Bytes of the same answers (dig's "MSG SIZE rcvd", with dig's own OPT record) measured before
// compression and after: 1,069 → 639 for the 10 SRV answers and their addresses, 409 → 209 for the
// 10 A answers; 4 → 7 SRV answers in a 512-byte UDP answer. The bounds leave a little slack above
// the compressed figures and fail on uncompressed answers.
const TEN_SRV_BYTES_BOUND = 660;
const TEN_A_BYTES_BOUND = 230;
const SRV_IN_512_AT_LEAST = 7;

async function register(a: TestAgent, node: string, address: string, service: Record<string, unknown>): Promise<void> {
  const r = await http(a.url, 'PUT', '/v1/catalog/register', { Node: node, Address: address, Service: service });
  if (r.status !== 200) throw new Error(`register ${node}: ${r.status} ${r.text}`);
}

const msgSize = (r: DigAnswer) => Number(/MSG SIZE {2}rcvd: (\d+)/.exec(r.raw)?.[1]);
const lines = (r: DigAnswer, section: 'answer' | 'additional' | 'authority') => r[section].map((x) => `${x.name} ${x.ttl} ${x.type} ${x.data}`).sort();

interface Walked {
  /** Names read, in message order, with whether each ended in a pointer. */
  names: Array<{ name: string; pointer: boolean; field: string }>;
}

/**
 * Walk a message's names the way a resolver does, failing on any pointer that does not point
 * backwards to a label inside the message (before the name that holds it).
 */
function walk(msg: Buffer): Walked {
  const names: Walked['names'] = [];
  const readName = (at: number, field: string): number => {
    const labels: string[] = [];
    let p = at;
    let end = -1;
    let pointer = false;
    let limit = at; // a pointer must point before where the name (or the previous jump) started
    for (let hops = 0; hops < 128; hops++) {
      const len = msg[p];
      if (len === undefined) throw new Error(`${field}: name runs past the message at ${p}`);
      if ((len & 0xc0) === 0xc0) {
        const target = msg.readUInt16BE(p) & 0x3fff;
        if (target < 12 || target >= limit) throw new Error(`${field}: pointer at ${p} to ${target} is not backwards`);
        if (end < 0) end = p + 2;
        pointer = true;
        limit = target;
        p = target;
        continue;
      }
      if ((len & 0xc0) !== 0) throw new Error(`${field}: bad label type at ${p}`);
      if (len === 0) {
        if (end < 0) end = p + 1;
        names.push({ name: labels.join('.'), pointer, field });
        return end;
      }
      labels.push(msg.toString('latin1', p + 1, p + 1 + len));
      p += 1 + len;
    }
    throw new Error(`${field}: pointer loop`);
  };
  const qd = msg.readUInt16BE(4);
  const rr = msg.readUInt16BE(6) + msg.readUInt16BE(8) + msg.readUInt16BE(10);
  let p = 12;
  for (let i = 0; i < qd; i++) p = readName(p, 'question') + 4;
  for (let i = 0; i < rr; i++) {
    p = readName(p, 'owner');
    const type = msg.readUInt16BE(p);
    const rdLength = msg.readUInt16BE(p + 8);
    const start = p + 10;
    const end = start + rdLength;
    let q = start;
    if (type === 33) q = readName(start + 6, 'SRV target');
    else if (type === 5 || type === 2) q = readName(start, 'CNAME/NS');
    else if (type === 6) q = readName(readName(start, 'SOA mname'), 'SOA rname') + 20;
    else q = end;
    if (q !== end) throw new Error(`RDLENGTH ${rdLength} of a type ${type} record does not match its RDATA (${q - start})`);
    p = end;
  }
  if (p !== msg.length) throw new Error(`${msg.length - p} bytes after the last record`);
  return { names };
}

withDig('DNS name compression', () => {
  let a: TestAgent;
  let port: number;

  beforeAll(async () => {
    // udp_answer_limit well above the set: a non-EDNS UDP answer is then cut by its 512 bytes alone.
    a = await startDevAgent((c) => Object.assign(c, applyConfigFile(c, { ports: { dns: 0 }, dns_config: { udp_answer_limit: 100 } })));
    port = a.agent.dnsPort;
    for (let i = 0; i < TEN; i++) await register(a, `ten-${i}`, `10.10.0.${i + 1}`, { Service: 'ten', Port: 8000 + i });
    for (let i = 0; i < MANY; i++) await register(a, `many-${i}`, `10.20.0.${i + 1}`, { Service: 'many', Port: 9000 });
    await register(a, 'own-addr', '10.30.0.1', { Service: 'alias', Port: 1, Address: 'db.example.com' });
  });
  afterAll(async () => {
    await a?.stop();
  });

  test('a 10-instance SRV answer: the same records as written out, in fewer bytes', async () => {
    const r = await dig(port, 'ten.service.registry', 'SRV', '+tcp');
    expect(r.status).toBe('NOERROR');
    expect(lines(r, 'answer')).toEqual(
      Array.from({ length: TEN }, (_, i) => `ten.service.registry. 0 SRV 1 1 ${8000 + i} ten-${i}.node.dc1.registry.`).sort(),
    );
    expect(lines(r, 'additional')).toEqual(Array.from({ length: TEN }, (_, i) => `ten-${i}.node.dc1.registry. 0 A 10.10.0.${i + 1}`).sort());
    expect(msgSize(r)).toBeLessThanOrEqual(TEN_SRV_BYTES_BOUND);
  });

  test('A (fewer bytes too), NXDOMAIN with its SOA, NS and CNAME answers decode as before', async () => {
    const ten = await dig(port, 'ten.service.registry', 'A', '+tcp');
    expect(lines(ten, 'answer')).toEqual(Array.from({ length: TEN }, (_, i) => `ten.service.registry. 0 A 10.10.0.${i + 1}`).sort());
    expect(msgSize(ten)).toBeLessThanOrEqual(TEN_A_BYTES_BOUND);
    const nx = await dig(port, 'nope.service.registry');
    expect(nx.status).toBe('NXDOMAIN');
    expect(nx.authority.map((x) => x.data.split(' ').slice(0, 2).join(' '))).toEqual(['ns.registry. hostmaster.registry.']);
    expect(lines(await dig(port, 'registry', 'NS'), 'answer')).toEqual(['registry. 0 NS ns.registry.']);
    expect(lines(await dig(port, 'alias.service.registry'), 'answer')).toEqual(['alias.service.registry. 0 CNAME db.example.com.']);
  });

  test('dns-packet decodes the answers; every pointer points backwards; SRV targets are never pointers', async () => {
    for (const [name, type] of [['ten.service.registry', 'SRV'], ['ten.service.registry', 'A'], ['nope.service.registry', 'A'], ['registry', 'NS'], ['registry', 'SOA'], ['alias.service.registry', 'A']]) {
      const msg = await tcpQuery(port, query(name, type));
      const walked = walk(msg);
      const decoded = decode(msg);
      // The walk and dns-packet read the same names.
      const fromWalk = walked.names.filter((n) => n.field === 'owner').map((n) => n.name);
      const fromPacket = [...decoded.answers, ...((decoded as unknown as { authorities: Array<{ name: string }> }).authorities ?? []), ...decoded.additionals].map((r) => (r as { name: string }).name);
      expect(fromWalk.map((n) => n || '.')).toEqual(fromPacket.map((n) => n || '.'));
      expect(walked.names.filter((n) => n.field === 'SRV target' && n.pointer)).toEqual([]);
    }
    const srv = walk(await tcpQuery(port, query('ten.service.registry', 'SRV')));
    // Every owner name repeats an earlier name: the question's, or an SRV target.
    expect(srv.names.filter((n) => n.field === 'owner').every((n) => n.pointer)).toBe(true);
    const soa = walk(await udpQuery(port, query('registry', 'SOA')));
    expect(soa.names.filter((n) => n.field.startsWith('SOA')).every((n) => n.pointer)).toBe(true);
  });

  test('a large SRV set: more records in a 512-byte UDP answer before TC', async () => {
    const r = await dig(port, 'many.service.registry', 'SRV', '+noedns', '+notcp', '+ignore');
    expect(r.transport).toBe('UDP');
    expect(r.flags).toContain('tc');
    expect(msgSize(r)).toBeLessThanOrEqual(512);
    expect(r.answer.length).toBeGreaterThanOrEqual(SRV_IN_512_AT_LEAST);
    // Every SRV answer kept still has its target's address.
    const targets = r.answer.map((x) => x.data.split(' ')[3]).sort();
    expect(r.additional.filter((x) => x.type === 'A').map((x) => x.name).sort()).toEqual(targets);
  });
});
