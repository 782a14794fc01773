// Every limit applies on reload (issue 33): a real server agent starts with small per-client caps
// on its HTTP port, its server port and its DNS TCP port; each cap is hit from one address; the
// config file is rewritten and the agent reloaded (SIGHUP, then PUT /v1/agent/reload), and the new
// value governs new connections — raised, then lowered — while lowered idle timeouts close
// connections already idle; snapshot_restore_max_bytes follows as well. The default caps share the
// descriptor limit out among every listener.
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { FrameEncoder } from '@registry/raft';
import { sleep, eventually } from '../support/wait';
import { startAgent, type DnsAgent } from '../dns/support/dns-process';

jest.setTimeout(120_000);

const FLOOD_FROM = '127.0.0.2';
const agents: DnsAgent[] = [];
const sockets: Socket[] = [];

afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const a of agents) await a.stop();
});

const logOf = (a: DnsAgent) => readFileSync(join(a.dir, 'agent.log'), 'utf8');
const reloads = (a: DnsAgent) => logOf(a).split('configuration reloaded').length - 1;

function writeLimits(a: DnsAgent, limits: Record<string, unknown>, httpConfig: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): void {
  writeFileSync(join(a.dir, 'config.json'), JSON.stringify({ limits, http_config: httpConfig, telemetry: { prometheus_retention_time: '60s' }, ...extra }));
}

async function sighup(a: DnsAgent): Promise<void> {
  const before = reloads(a);
  process.kill(a.pid, 'SIGHUP');
  expect(await eventually(() => reloads(a) > before, 15_000)).toBe(true);
}

async function putReload(a: DnsAgent): Promise<void> {
  const r = await fetch(`${a.url}/v1/agent/reload`, { method: 'PUT' });
  expect(r.status).toBe(200);
}

interface Conn {
  socket: Socket;
  closed: boolean;
  data: Buffer;
}

/** `n` connections to `port` from FLOOD_FROM, each sending `first` (if any) once connected. */
async function open(port: number, n: number, first?: Buffer): Promise<Conn[]> {
  const conns = await Promise.all(
    Array.from({ length: n }, () => new Promise<Conn>((resolve) => {
      const c: Conn = { socket: connect({ host: '127.0.0.1', port, localAddress: FLOOD_FROM }), closed: false, data: Buffer.alloc(0) };
      sockets.push(c.socket);
      c.socket.on('error', () => undefined);
      c.socket.on('data', (d: Buffer) => (c.data = Buffer.concat([c.data, d])));
      c.socket.on('close', () => {
        c.closed = true;
        resolve(c);
      });
      c.socket.on('connect', () => {
        if (first) c.socket.write(first);
        resolve(c);
      });
    })),
  );
  await sleep(700); // refused ones are closed within ~50 ms of their answer
  return conns;
}

const held = (conns: Conn[]) => conns.filter((c) => !c.closed).length;
const closeAll = async (conns: Conn[]) => {
  for (const c of conns) c.socket.destroy();
  await sleep(300);
};

/** A DNS query framed for TCP. */
function dnsTcpQuery(id: number): Buffer {
  const name = Buffer.from([7, ...Buffer.from('limited'), 4, ...Buffer.from('node'), 8, ...Buffer.from('registry'), 0]);
  const msg = Buffer.concat([Buffer.from([id >> 8, id & 0xff, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), name, Buffer.from([0, 1, 0, 1])]);
  return Buffer.concat([Buffer.from([msg.length >> 8, msg.length & 0xff]), msg]);
}

const httpRequest = Buffer.from('GET /v1/status/leader HTTP/1.1\r\nHost: x\r\n\r\n');
const rpcFrame = () => Buffer.from(new FrameEncoder().encode([1, 1, 'no.such.method', null]));

/** Per-client caps of the three TCP listeners, as seen from FLOOD_FROM: connections held of 6 opened. */
async function heldPerListener(a: DnsAgent): Promise<{ http: number; server: number; dns: number }> {
  const http = await open(a.httpPort, 6);
  const server = await open(a.serverPort, 6);
  const dns = await open(a.dnsPort, 6);
  const out = { http: held(http), server: held(server), dns: held(dns) };
  await closeAll([...http, ...server, ...dns]);
  return out;
}

/**
 * The default total caps (derived: none is set) share the descriptor limit out among every listener,
 * a quarter kept back: HTTP may hold 256 more sockets open while refusing them, and 256 (a quarter)
 * stay for storage and Raft.
 */
function expectSharesWithin1024(a: DnsAgent): void {
  const log = logOf(a);
  const http = Number(/http connection limits: maxConns=(\d+)/.exec(log)?.[1]);
  const server = Number(/server port limits: maxConns=(\d+)/.exec(log)?.[1]);
  const dns = Number(/dns interface listening:.*"maxConns":(\d+)/.exec(log)?.[1]);
  expect([http, server, dns].every((n) => n > 0)).toBe(true);
  expect(http + 256 + server + dns + 256).toBeLessThanOrEqual(1024);
}

test('per-client caps of HTTP, the server port and DNS TCP follow the config file on SIGHUP and on PUT /v1/agent/reload', async () => {
  const a = await startAgent({
    node: 'limited',
    nofile: 1024,
    limits: { http_max_conns_per_client: 2, rpc_max_conns_per_client: 2, rpc_handshake_timeout: '60s', dns_max_conns_per_client: 2, dns_tcp_idle_timeout: '60s' },
  });
  agents.push(a);
  expectSharesWithin1024(a);
  expect(await heldPerListener(a)).toEqual({ http: 2, server: 2, dns: 2 });

  // Raised by SIGHUP.
  writeLimits(a, { http_max_conns_per_client: 4, rpc_max_conns_per_client: 4, rpc_handshake_timeout: '60s', dns_max_conns_per_client: 4, dns_tcp_idle_timeout: '60s' });
  await sighup(a);
  expect(logOf(a)).toMatch(/configuration reloaded: changed=.*limits\.http_max_conns_per_client: 2 → 4/);
  expect(logOf(a)).not.toMatch(/take effect only after a restart/);
  expect(await heldPerListener(a)).toEqual({ http: 4, server: 4, dns: 4 });

  // Lowered by PUT /v1/agent/reload.
  writeLimits(a, { http_max_conns_per_client: 1, rpc_max_conns_per_client: 1, rpc_handshake_timeout: '60s', dns_max_conns_per_client: 1, dns_tcp_idle_timeout: '60s' });
  await putReload(a);
  expect(await heldPerListener(a)).toEqual({ http: 1, server: 1, dns: 1 });
  // The HTTP refusal names the cap in force.
  const refused = await open(a.httpPort, 2, httpRequest);
  expect(refused.map((c) => c.data.toString())).toContainEqual(expect.stringContaining('at most 1 per client (limits.http_max_conns_per_client)'));
  await closeAll(refused);
  expect(a.alive()).toBe(true);
});

test('a lowered idle timeout closes connections already idle on each listener, a raised one keeps new ones; the restore size follows too', async () => {
  const a = await startAgent({ node: 'limited', limits: { rpc_idle_timeout: '120s', dns_tcp_idle_timeout: '120s' } });
  agents.push(a);
  // One connection per listener that made a request and now waits, idle.
  const [http] = await open(a.httpPort, 1, httpRequest);
  const [server] = await open(a.serverPort, 1, rpcFrame());
  const [dns] = await open(a.dnsPort, 1, dnsTcpQuery(7));
  expect(await eventually(() => [http, server, dns].every((c) => c!.data.length > 0), 5_000)).toBe(true);
  expect(held([http!, server!, dns!])).toBe(3);

  writeLimits(a, { rpc_idle_timeout: '1s', dns_tcp_idle_timeout: '1s' }, { idle_timeout: '1s' });
  const reloadedAt = Date.now();
  await putReload(a);
  await eventually(() => held([http!, server!, dns!]) === 0, 8_000);
  expect({ http: http!.closed, server: server!.closed, dns: dns!.closed }).toEqual({ http: true, server: true, dns: true });
  expect(Date.now() - reloadedAt).toBeLessThan(8_000);

  // Raised again by SIGHUP: a new idle connection outlives the old 1 s.
  writeLimits(a, { rpc_idle_timeout: '120s', dns_tcp_idle_timeout: '120s' }, { idle_timeout: '120s' });
  await sighup(a);
  const later = [...(await open(a.httpPort, 1, httpRequest)), ...(await open(a.serverPort, 1, rpcFrame())), ...(await open(a.dnsPort, 1, dnsTcpQuery(8)))];
  await sleep(3_000);
  expect(held(later)).toBe(3);
  await closeAll(later);

  // snapshot_restore_max_bytes, lowered then raised.
  const restore = async () => {
    const r = await fetch(`${a.url}/v1/snapshot`, { method: 'PUT', body: Buffer.alloc(8192, 1) });
    return { status: r.status, text: await r.text() };
  };
  writeLimits(a, {}, {}, { snapshot_restore_max_bytes: 2048 });
  await putReload(a);
  expect(await restore()).toEqual({ status: 413, text: expect.stringContaining('larger than 2048 bytes (snapshot_restore_max_bytes)') });
  writeLimits(a, {}, {}, { snapshot_restore_max_bytes: 1 << 20 });
  await sighup(a);
  // Taken in whole now, and refused for what it is: not an archive.
  expect((await restore()).status).toBe(400);
});
