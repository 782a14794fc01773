// Labels are bytes (issue 33, finding 7): a query whose labels are not UTF-8 text — invalid
// UTF-8 bytes, a "." byte inside a label, a 63-byte label of 0xff — is answered with its question
// echoed byte for byte, and the answer decodes; over UDP and TCP, by a server and by a client
// agent. Such a name can match nothing in the catalog: NXDOMAIN under the domain, REFUSED outside.
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

/** A query (RD set, type A or `qtype`, class IN) whose name is these raw labels. */
function rawQuery(id: number, labels: Buffer[], qtype = 1): Buffer {
  const header = Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  const name = Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), l])), Buffer.from([0])]);
  return Buffer.concat([header, name, Buffer.from([0, qtype, 0, 1])]);
}

const text = (s: string) => Buffer.from(s, 'latin1');

const CASES: Array<{ what: string; labels: Buffer[]; rcode: string }> = [
  { what: 'invalid UTF-8 bytes in a node name', labels: [Buffer.from([0xff, 0xfe, 0x61, 0xc3]), text('node'), text('registry')], rcode: 'NXDOMAIN' },
  { what: 'a 63-byte label of 0xff (as U+FFFD it would be 189 bytes)', labels: [Buffer.alloc(63, 0xff), text('service'), text('registry')], rcode: 'NXDOMAIN' },
  { what: 'a "." byte inside a label', labels: [text('a.b'), text('node'), text('registry')], rcode: 'NXDOMAIN' },
  { what: 'a truncated UTF-8 sequence in a tag', labels: [Buffer.from([0xe2, 0x82]), text('web'), text('service'), text('registry')], rcode: 'NXDOMAIN' },
  { what: 'invalid bytes outside the domain', labels: [Buffer.from([0x80, 0x81]), text('example'), text('com')], rcode: 'REFUSED' },
];

for (const transport of ['udp', 'tcp'] as const) {
  for (const role of ['server', 'client agent'] as const) {
    test(`${transport}, ${role}: each question is echoed byte for byte and the answer decodes`, async () => {
      const a = role === 'server' ? server! : client!;
      let id = transport === 'udp' ? 1000 : 2000;
      for (const c of CASES) {
        const q = rawQuery(++id, c.labels);
        const answer = transport === 'udp' ? await udpQuery(a.dnsPort, q) : await tcpQuery(a.dnsPort, q);
        const echoed = answer.subarray(12, q.length);
        expect({ what: c.what, echoed: echoed.toString('hex') }).toEqual({ what: c.what, echoed: q.subarray(12).toString('hex') });
        const d = decode(answer);
        expect({ what: c.what, id: d.id, rcode: d.rcode, questions: d.questions.length }).toEqual({ what: c.what, id, rcode: c.rcode, questions: 1 });
      }
      await assertServes(a);
    });
  }
}

test('names that are text still answer as before (a node by its name, in any case)', async () => {
  const answer = decode(await udpQuery(server!.dnsPort, rawQuery(7, [text('DNS-Server'), text('node'), text('registry')])));
  expect(answer.rcode).toBe('NOERROR');
  expect(answer.questions[0]!.name).toBe('DNS-Server.node.registry');
  expect(answer.answers.map((r) => r.data)).toEqual(['127.0.0.1']);
});
