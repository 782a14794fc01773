// Idle connections to the DNS TCP port (issue 33, finding 1, its DNS half): connections that send
// nothing cost a bounded slice of descriptors — past `limits.dns_max_conns_per_client` from one
// address, and past `limits.dns_max_conns` in all, a connection is closed at once and counted —
// and those held are closed when no whole query came within the first-query timeout. Under a low
// `ulimit -n` with the default (derived) caps, 1,100 idle connections leave the server answering
// DNS and HTTP and applying writes through Raft. Loopback addresses 127.0.0.1 and 127.0.0.2 stand
// for two clients (Linux routes all of 127/8 to lo).
import { connect, type Socket } from 'node:net';
import { eventually, sleep } from '../support/wait';
import { assertServes, counter, decode, query, startAgent, tcpQuery, type DnsAgent } from './support/dns-process';

jest.setTimeout(60_000);

interface Held {
  socket: Socket;
  closed: boolean;
}

const agents: DnsAgent[] = [];
const sockets: Held[] = [];

afterAll(async () => {
  for (const h of sockets) h.socket.destroy();
  for (const a of agents) await a.stop();
});

/** Opens `count` connections from `localAddress` that send nothing, `batch` at a time. */
async function openIdle(port: number, count: number, localAddress = '127.0.0.1', batch = 100): Promise<Held[]> {
  const out: Held[] = [];
  for (let done = 0; done < count; done += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, count - done) }, () =>
        new Promise<void>((resolve) => {
          const h: Held = { socket: connect({ host: '127.0.0.1', port, localAddress }), closed: false };
          h.socket.on('connect', () => resolve());
          h.socket.on('error', () => undefined);
          h.socket.on('close', () => {
            h.closed = true;
            resolve();
          });
          out.push(h);
          sockets.push(h);
        }),
      ),
    );
  }
  return out;
}

const open = (hs: Held[]) => hs.filter((h) => !h.closed).length;

test('past the per-client and total caps a connection is closed at once and counted; idle ones are closed after the first-query timeout', async () => {
  const a = await startAgent({ limits: { dns_max_conns: 40, dns_max_conns_per_client: 25, dns_tcp_idle_timeout: '3s' } });
  agents.push(a);
  const started = Date.now();

  const first = await openIdle(a.dnsPort, 60, '127.0.0.1');
  await sleep(300);
  expect(open(first)).toBe(25);
  const second = await openIdle(a.dnsPort, 30, '127.0.0.2');
  await sleep(300);
  expect(open(second)).toBe(15);
  expect(await counter(a, 'registry_dns_tcp_refused_total', { reason: 'max_conns_per_client' })).toBe(35);
  expect(await counter(a, 'registry_dns_tcp_refused_total', { reason: 'max_conns' })).toBe(15);
  // While the port is full: DNS over UDP and HTTP answer; a TCP query is refused (the connection closes).
  await assertServes(a, 2_000, { tcp: false });
  await expect(tcpQuery(a.dnsPort, query(`${a.node}.node.registry`, 'A'), 2_000, '127.0.0.3')).rejects.toThrow(/closed|reset|ECONNRESET/);

  // No whole query within the first-query timeout (3 s, the idle timeout here): all closed.
  expect(await eventually(() => open(first) + open(second) === 0, 8_000)).toBe(true);
  expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
  expect(await counter(a, 'registry_dns_tcp_timeouts_total', { reason: 'first_query' })).toBe(40);
  const answer = decode(await tcpQuery(a.dnsPort, query(`${a.node}.node.registry`, 'A', { id: 9 }), 2_000, '127.0.0.3'));
  expect(answer.answers).toHaveLength(1);

  // A connection that asked once and then says nothing is closed after the idle timeout.
  const s = connect({ host: '127.0.0.1', port: a.dnsPort });
  const closed = new Promise<number>((resolve) => s.on('close', () => resolve(Date.now())));
  s.on('error', () => undefined);
  s.on('data', () => undefined); // read the answer, so the close is seen
  const q = query(`${a.node}.node.registry`, 'A');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(q.length);
  s.write(Buffer.concat([len, q]));
  const askedAt = Date.now();
  const closedAt = await closed;
  expect(closedAt - askedAt).toBeGreaterThanOrEqual(2_500);
  expect(closedAt - askedAt).toBeLessThan(8_000);
  expect(await counter(a, 'registry_dns_tcp_timeouts_total', { reason: 'idle' })).toBe(1);
  await assertServes(a);
});

test('under ulimit -n 512, 1,100 idle DNS TCP connections leave the server answering and applying writes', async () => {
  const a = await startAgent({ nofile: 512 });
  agents.push(a);
  const held = await openIdle(a.dnsPort, 1_100);
  await sleep(300);
  // The derived cap: an eighth of the descriptor limit.
  expect(open(held)).toBeLessThanOrEqual(64);
  expect(await counter(a, 'registry_dns_tcp_refused_total')).toBeGreaterThanOrEqual(1_100 - 64);
  // Writes go through Raft (and its log files) and are read back; DNS answers over UDP.
  for (let i = 0; i < 3; i++) await assertServes(a, 2_000, { tcp: false });
  const leader = await (await fetch(`${a.url}/v1/status/leader`)).json();
  expect(leader).not.toBe('');
  for (const h of held) h.socket.destroy();
  await sleep(200);
  await assertServes(a);
});
