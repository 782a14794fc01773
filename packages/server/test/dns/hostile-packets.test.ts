// Hostile DNS messages through the real process (issue 31's list): empty and short datagrams,
// truncated headers and questions, compression-pointer loops, names with too many labels, a
// question count the message does not hold, EDNS oddities (several OPT records, an unknown EDNS
// version, the largest UDP size, an option running past its record), over UDP and TCP, to a
// server and a client agent. Each message gets a FORMERR with its own id (when it has a header),
// or a well-formed answer; and after each family the agent still answers DNS over UDP and TCP
// and HTTP writes and reads.
import { connect } from 'node:net';
import { assertServes, decode, startAgent, tcpQuery, udpQuery, type DnsAgent } from './support/dns-process';

jest.setTimeout(60_000);

let server: DnsAgent | undefined;
let client: DnsAgent | undefined;

beforeAll(async () => {
  server = await startAgent();
  client = await startAgent({ joinServer: server });
});

afterAll(async () => {
  await client?.stop();
  await server?.stop();
});

const label = (s: string) => Buffer.concat([Buffer.from([s.length]), Buffer.from(s, 'latin1')]);
const NAME = Buffer.concat([label('dns-server'), label('node'), label('registry'), Buffer.from([0])]);
const A_IN = Buffer.from([0, 1, 0, 1]);

/** A header: id, RD, and the four section counts. */
function header(id: number, qd: number, an = 0, ns = 0, ar = 0): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt16BE(id, 0);
  h.writeUInt16BE(0x0100, 2);
  [qd, an, ns, ar].forEach((n, i) => h.writeUInt16BE(n, 4 + 2 * i));
  return h;
}

/** An OPT record: UDP size, extended rcode/version/flags (the TTL field) and raw option bytes. */
function opt(udpSize: number, version = 0, options = Buffer.alloc(0), rdlenDelta = 0): Buffer {
  const r = Buffer.alloc(11);
  r[0] = 0; // root name
  r.writeUInt16BE(41, 1);
  r.writeUInt16BE(udpSize, 3);
  r[5] = 0;
  r[6] = version;
  r.writeUInt16BE(0, 7);
  r.writeUInt16BE(options.length + rdlenDelta, 9);
  return Buffer.concat([r, options]);
}

type Expect = 'FORMERR' | 'answer' | 'none';

interface Case {
  what: string;
  msg: Buffer;
  expect: Expect;
}

const many = (n: number) => Buffer.concat([...Array.from({ length: n }, () => label('a')), Buffer.from([0])]);

const FAMILIES: Record<string, Case[]> = {
  malformed: [
    { what: 'an empty message', msg: Buffer.alloc(0), expect: 'none' },
    { what: 'five bytes', msg: Buffer.from([1, 2, 3, 4, 5]), expect: 'none' },
    { what: 'a reserved label type (0x40)', msg: Buffer.concat([header(11, 1), Buffer.from([0x40, 1, 0x61, 0]), A_IN]), expect: 'FORMERR' },
    { what: 'a response, not a query', msg: Buffer.concat([Buffer.from([0, 12, 0x81, 0, 0, 1, 0, 0, 0, 0, 0, 0]), NAME, A_IN]), expect: 'none' },
    { what: 'an unknown opcode', msg: Buffer.concat([Buffer.from([0, 13, 0x79, 0, 0, 1, 0, 0, 0, 0, 0, 0]), NAME, A_IN]), expect: 'answer' },
    { what: 'no question at all', msg: header(14, 0), expect: 'FORMERR' },
  ],
  truncated: [
    { what: 'a header cut short', msg: header(21, 1).subarray(0, 9), expect: 'none' },
    { what: 'a question count with no question', msg: header(22, 1), expect: 'FORMERR' },
    { what: 'a label longer than the message', msg: Buffer.concat([header(23, 1), Buffer.from([30, 0x61, 0x62])]), expect: 'FORMERR' },
    { what: 'a question without its type and class', msg: Buffer.concat([header(24, 1), NAME]), expect: 'FORMERR' },
    { what: '65,535 questions announced, one present', msg: Buffer.concat([header(25, 65535), NAME, A_IN]), expect: 'FORMERR' },
    { what: 'an answer count with no answers', msg: Buffer.concat([header(26, 1, 40), NAME, A_IN]), expect: 'FORMERR' },
  ],
  compression: [
    { what: 'a first name pointing at itself', msg: Buffer.concat([header(31, 1), Buffer.from([0xc0, 12]), A_IN]), expect: 'FORMERR' },
    { what: 'a first name pointing into the header', msg: Buffer.concat([header(32, 1), Buffer.from([0xc0, 2]), A_IN]), expect: 'FORMERR' },
    { what: 'a second name pointing forward to itself', msg: Buffer.concat([header(33, 2), NAME, A_IN, Buffer.from([0xc0, 12 + NAME.length + 4]), A_IN]), expect: 'FORMERR' },
    { what: 'two names pointing at each other', msg: (() => {
      const second = 12 + NAME.length + 4;
      return Buffer.concat([header(34, 3), NAME, A_IN, Buffer.from([0xc0, second + 6]), A_IN, Buffer.from([0xc0, second]), A_IN]);
    })(), expect: 'FORMERR' },
    { what: 'a pointer past the end', msg: Buffer.concat([header(35, 2), NAME, A_IN, Buffer.from([0xc3, 0xff]), A_IN]), expect: 'FORMERR' },
    { what: 'a valid pointer back to the first name', msg: Buffer.concat([header(36, 2), NAME, A_IN, Buffer.from([0xc0, 12]), A_IN]), expect: 'answer' },
  ],
  labels: [
    { what: '127 one-byte labels (255 bytes, the most a name may have)', msg: Buffer.concat([header(41, 1), many(127), A_IN]), expect: 'answer' },
    { what: '128 one-byte labels (257 bytes)', msg: Buffer.concat([header(42, 1), many(128), A_IN]), expect: 'FORMERR' },
    { what: '124 one-byte labels, then node.registry (263 bytes)', msg: Buffer.concat([header(46, 1), many(124).subarray(0, -1), label('node'), label('registry'), Buffer.from([0]), A_IN]), expect: 'FORMERR' },
    { what: '100 one-byte labels under the domain', msg: Buffer.concat([header(43, 1), many(100).subarray(0, -1), label('node'), label('registry'), Buffer.from([0]), A_IN]), expect: 'answer' },
    { what: 'a 63-byte label', msg: Buffer.concat([header(44, 1), label('x'.repeat(63)), label('node'), label('registry'), Buffer.from([0]), A_IN]), expect: 'answer' },
    { what: '2,000 questions by pointer', msg: Buffer.concat([header(45, 2000), NAME, A_IN, ...Array.from({ length: 1999 }, () => Buffer.concat([Buffer.from([0xc0, 12]), A_IN]))]), expect: 'answer' },
  ],
  edns: [
    { what: 'two OPT records', msg: Buffer.concat([header(51, 1, 0, 0, 2), NAME, A_IN, opt(4096), opt(1232)]), expect: 'answer' },
    { what: 'EDNS version 7', msg: Buffer.concat([header(52, 1, 0, 0, 1), NAME, A_IN, opt(4096, 7)]), expect: 'answer' },
    { what: 'UDP size 65,535', msg: Buffer.concat([header(53, 1, 0, 0, 1), NAME, A_IN, opt(65535)]), expect: 'answer' },
    { what: 'UDP size 0', msg: Buffer.concat([header(54, 1, 0, 0, 1), NAME, A_IN, opt(0)]), expect: 'answer' },
    { what: 'an option running past its record', msg: Buffer.concat([header(55, 1, 0, 0, 1), NAME, A_IN, opt(4096, 0, Buffer.from([0, 8, 0, 200, 0, 1]))]), expect: 'FORMERR' },
    { what: 'a record length past the message', msg: Buffer.concat([header(56, 1, 0, 0, 1), NAME, A_IN, opt(4096, 0, Buffer.alloc(0), 500)]), expect: 'FORMERR' },
    { what: 'a client subnet option with a prefix longer than the address', msg: Buffer.concat([header(57, 1, 0, 0, 1), NAME, A_IN, opt(4096, 0, Buffer.from([0, 8, 0, 8, 0, 1, 200, 0, 10, 0, 0, 1]))]), expect: 'answer' },
  ],
};

/** What came back for `c` over `transport`: undefined when nothing did (within the wait). */
async function send(a: DnsAgent, transport: 'udp' | 'tcp', c: Case): Promise<Buffer | undefined> {
  if (transport === 'udp') return udpQuery(a.dnsPort, c.msg, c.expect === 'none' ? 300 : 2_000).catch(() => undefined);
  if (c.msg.length < 12) {
    // Over TCP a frame shorter than a header cannot be answered: the connection is closed.
    return new Promise((resolve) => {
      const s = connect({ host: '127.0.0.1', port: a.dnsPort });
      const len = Buffer.alloc(2);
      len.writeUInt16BE(c.msg.length);
      s.on('error', () => undefined);
      s.on('data', (d: Buffer) => resolve(d));
      s.on('close', () => resolve(undefined));
      s.write(Buffer.concat([len, c.msg]));
      setTimeout(() => s.destroy(), 2_000);
    });
  }
  return tcpQuery(a.dnsPort, c.msg, 2_000).catch(() => undefined);
}

for (const [family, cases] of Object.entries(FAMILIES)) {
  for (const transport of ['udp', 'tcp'] as const) {
    test(`${family} messages over ${transport}: FORMERR or an answer, and the server and client agent keep serving`, async () => {
      for (const a of [server!, client!]) {
        const seen: string[] = [];
        for (const c of cases) {
          const out = await send(a, transport, c);
          const id = c.msg.length >= 2 ? c.msg.readUInt16BE(0) : -1;
          let got: string;
          if (out === undefined) got = 'none';
          else {
            const d = decode(out); // every answer decodes
            got = d.id !== id ? `wrong id ${d.id}` : d.rcode === 'FORMERR' ? 'FORMERR' : 'answer';
          }
          seen.push(`${c.what}: ${got}`);
        }
        expect(seen).toEqual(cases.map((c) => `${c.what}: ${c.expect}`));
        await assertServes(a);
      }
    });
  }
}
