// DNS over TCP with pipelined queries whose answers are never read (issue 31, finding 2): five
// connections each send 20,000 SRV queries for a service of 20 instances and read nothing. Each
// connection takes only `limits.dns_tcp_max_in_flight` queries at a time and stops reading once
// its answers are not drained, so the server's memory stays within a small bound and it keeps
// answering DNS over UDP and TCP and HTTP reads and writes meanwhile; the connections' unread
// queries stay in the kernel's buffers (unread: /proc/net/tcp). Once they close, a pipelining client that does read gets
// every answer, in order.
import { connect, type Socket } from 'node:net';
import { sleep } from '../support/wait';
import { assertServes, decode, query, rssMiB, startAgent, unreadBytesByConnection, type DnsAgent } from './support/dns-process';

jest.setTimeout(60_000);

const CONNECTIONS = 5;
const QUERIES = 20_000;
const INSTANCES = 20;
/** Far below what answering every query would hold (old code: hundreds of MiB). */
const RSS_BUDGET_MIB = 64;

let server: DnsAgent | undefined;
const flood: Socket[] = [];

afterAll(async () => {
  for (const s of flood) s.destroy();
  await server?.stop();
});

/** `count` SRV queries for `name`, each framed by its two-byte length, in one buffer. */
function pipelined(name: string, count: number, firstId = 1): Buffer {
  const frames: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const q = query(name, 'SRV', { id: (firstId + i) & 0xffff });
    const len = Buffer.alloc(2);
    len.writeUInt16BE(q.length);
    frames.push(len, q);
  }
  return Buffer.concat(frames);
}

test('pipelined queries whose answers are never read cost bounded memory and stop nothing else', async () => {
  server = await startAgent({ limits: { dns_tcp_max_in_flight: 16 } });
  for (let i = 0; i < INSTANCES; i++) {
    const r = await fetch(`${server.url}/v1/catalog/register`, {
      method: 'PUT',
      body: JSON.stringify({ Node: `big-node-${i}`, Address: `10.0.${i >> 8}.${i & 255}`, Service: { Service: 'big', Port: 8000 + i } }),
    });
    expect(r.status).toBe(200);
  }
  await assertServes(server);
  const rssBefore = rssMiB(server.pid);

  const payload = pipelined('big.service.registry', QUERIES);
  for (let c = 0; c < CONNECTIONS; c++) {
    const s = connect({ host: '127.0.0.1', port: server.dnsPort });
    s.on('error', () => undefined);
    s.pause(); // never read an answer
    s.write(payload);
    flood.push(s);
  }

  // While the connections hold their unread answers: everything else still answers, promptly.
  for (let round = 0; round < 4; round++) {
    await sleep(1_000);
    await assertServes(server, 2_000);
  }
  const grown = rssMiB(server.pid) - rssBefore;
  expect(grown).toBeLessThan(RSS_BUDGET_MIB);
  // Held, not dropped, and no longer read: each connection's queries wait in the server's kernel buffer.
  expect(flood.every((s) => !s.destroyed)).toBe(true);
  const unread = unreadBytesByConnection(server.dnsPort);
  expect(unread).toHaveLength(CONNECTIONS);
  expect(unread.filter((n) => n > 0)).toHaveLength(CONNECTIONS);

  for (const s of flood) s.destroy();
  await sleep(200);
  await assertServes(server);

  // A client that pipelines and reads gets every answer, in the order asked.
  const n = 200;
  const answers = await new Promise<number[]>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: server!.dnsPort });
    let buf = Buffer.alloc(0);
    const ids: number[] = [];
    const timer = setTimeout(() => reject(new Error(`only ${ids.length} of ${n} answers`)), 10_000);
    s.on('error', reject);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        ids.push(decode(buf.subarray(2, 2 + buf.readUInt16BE(0))).id);
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (ids.length === n) {
        clearTimeout(timer);
        s.destroy();
        resolve(ids);
      }
    });
    s.write(pipelined('big.service.registry', n, 30_000));
  });
  expect(answers).toEqual(Array.from({ length: n }, (_, i) => 30_000 + i));
});
