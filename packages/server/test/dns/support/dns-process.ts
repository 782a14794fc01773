// Real agent processes for the DNS hostile-input tests: a one-server cluster (and a client agent
// joined to it) with the DNS interface on a free port, raw DNS over UDP and TCP, the process's
// resident memory, and the DNS counters from its Prometheus metrics. Processes are killed by PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../../support/processes';
import { freePorts } from '../../support/ports';
import { eventually } from '../../support/wait';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const dnsPacket = require('dns-packet') as {
  encode(p: object): Buffer;
  decode(b: Buffer): DecodedPacket;
};

export interface DecodedPacket {
  id: number;
  type: string;
  rcode: string;
  flags: number;
  questions: Array<{ name: string; type: string }>;
  answers: Array<{ name: string; type: string; data: unknown }>;
  additionals: Array<{ type: string }>;
}

export interface DnsAgent {
  child: ChildProcess;
  pid: number;
  url: string;
  httpPort: number;
  dnsPort: number;
  serverPort: number;
  dir: string;
  node: string;
  exited: Promise<number | null>;
  /** Whether the process is still running. */
  alive(): boolean;
  stop(): Promise<void>;
}

export interface AgentOptions {
  /** The `limits` section of its config file. */
  limits?: Record<string, unknown>;
  /** Start it with this soft RLIMIT_NOFILE (`ulimit -n`). */
  nofile?: number;
  /** A client agent joined to this server's RPC address, instead of a server. */
  joinServer?: DnsAgent;
  node?: string;
}

export async function startAgent(opts: AgentOptions = {}): Promise<DnsAgent> {
  const dir = mkdtempSync(join(tmpdir(), 'registry-dns-'));
  const [httpPort, dnsPort, serverPort] = await freePorts(3);
  const configFile = join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify({ limits: opts.limits ?? {}, telemetry: { prometheus_retention_time: '60s' } }));
  const node = opts.node ?? (opts.joinServer ? 'dns-client' : 'dns-server');
  const role = opts.joinServer ? ['-retry-join', `127.0.0.1:${opts.joinServer.serverPort}`] : ['-server', '-bootstrap-expect', '1'];
  const args = [
    CLI, 'agent', ...role, '-node', node, '-data-dir', join(dir, 'data'), '-bind', '127.0.0.1', '-client', '127.0.0.1',
    '-http-port', String(httpPort), '-server-port', String(serverPort), '-dns-port', String(dnsPort),
    '-config-file', configFile, '-log-level', 'info',
  ];
  const log = openSync(join(dir, 'agent.log'), 'a');
  // `exec` keeps the PID: the shell only lowers the descriptor limit first.
  const child = opts.nofile
    ? spawn('/bin/sh', ['-c', `ulimit -n ${opts.nofile} && exec "$0" "$@"`, process.execPath, ...args], { stdio: ['ignore', log, log] })
    : spawn(process.execPath, args, { stdio: ['ignore', log, log] });
  closeSync(log);
  let running = true;
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code) => {
      running = false;
      r(code);
    }),
  );
  const agent: DnsAgent = {
    child,
    pid: child.pid!,
    url: `http://127.0.0.1:${httpPort}`,
    httpPort,
    dnsPort,
    serverPort,
    dir,
    node,
    exited,
    alive: () => running,
    stop: async () => {
      if (running) {
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // Ready once its own node answers over DNS (the catalog has it, the DNS port is bound).
  const ready = await eventually(async () => {
    if (!running) return false;
    const r = await udpQuery(dnsPort, query(`${node}.node.registry`, 'A'), 1_000).catch(() => undefined);
    return r !== undefined && decode(r).answers.length > 0;
  }, 30_000, 200);
  if (!ready) {
    const text = readFileSync(join(dir, 'agent.log'), 'utf8');
    await agent.stop();
    throw new Error(`agent ${node} did not answer DNS within 30 s:\n${text.slice(-3000)}`);
  }
  return agent;
}

let nextId = 1;

/** A query for `name` (type `type`), optionally with EDNS. */
export function query(name: string, type: string, opts: { id?: number; edns?: boolean } = {}): Buffer {
  const id = opts.id ?? (nextId++ & 0xffff);
  return dnsPacket.encode({
    id,
    type: 'query',
    flags: 0x0100,
    questions: [{ name, type, class: 'IN' }],
    additionals: opts.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: 4096, flags: 0, options: [] }] : [],
  });
}

export function decode(b: Buffer): DecodedPacket {
  return dnsPacket.decode(b);
}

/** One datagram to the DNS port, and the first answer (rejects after `timeoutMs`). */
export function udpQuery(port: number, msg: Buffer, timeoutMs = 2_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = createSocket('udp4');
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error(`no UDP answer within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on('error', (err) => {
      clearTimeout(timer);
      sock.close();
      reject(err);
    });
    sock.on('message', (m) => {
      clearTimeout(timer);
      sock.close();
      resolve(m);
    });
    sock.send(msg, port, '127.0.0.1');
  });
}

/** One length-framed message over a new TCP connection, and its answer (rejects on timeout or close). */
export function tcpQuery(port: number, msg: Buffer, timeoutMs = 2_000, localAddress?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port, localAddress });
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no TCP answer within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    sock.on('close', () => {
      clearTimeout(timer);
      reject(new Error('TCP connection closed without an answer'));
    });
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        clearTimeout(timer);
        sock.destroy();
        resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)));
      }
    });
    const len = Buffer.alloc(2);
    len.writeUInt16BE(msg.length);
    sock.write(Buffer.concat([len, msg]));
  });
}

/** Resident set size of a process, MiB (Linux). */
export function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) / 1024;
}

async function timed<T>(what: string, p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The agent serves: its own node's address over DNS UDP (and TCP unless `tcp` is false), and an
 * HTTP write then read of a key, each within `ms`. Throws saying what did not answer.
 */
export async function assertServes(a: DnsAgent, ms = 2_000, opts: { tcp?: boolean } = {}): Promise<void> {
  if (!a.alive()) throw new Error('the agent process has exited');
  const q = (id: number) => query(`${a.node}.node.registry`, 'A', { id });
  const udp = decode(await udpQuery(a.dnsPort, q(101), ms));
  if (udp.id !== 101 || udp.answers.length !== 1) throw new Error(`UDP answer does not match its query: ${JSON.stringify(udp)}`);
  if (opts.tcp !== false) {
    const tcp = decode(await tcpQuery(a.dnsPort, q(102), ms));
    if (tcp.id !== 102 || tcp.answers.length !== 1) throw new Error(`TCP answer does not match its query: ${JSON.stringify(tcp)}`);
  }
  const key = `/v1/kv/dns-test/${Date.now()}`;
  const put = await timed('HTTP PUT', fetch(a.url + key, { method: 'PUT', body: 'v', signal: AbortSignal.timeout(ms) }), ms);
  if (put.status !== 200) throw new Error(`HTTP PUT: ${put.status} ${await put.text()}`);
  const get = await timed('HTTP GET', fetch(`${a.url}${key}?raw`, { signal: AbortSignal.timeout(ms) }), ms);
  if ((await get.text()) !== 'v') throw new Error('HTTP GET did not read back the write');
}

/** The value of one series of a counter in the agent's Prometheus metrics (0 when absent). */
export async function counter(a: DnsAgent, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${a.url}/v1/agent/metrics?format=prometheus`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const l = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`))) total += Number(m[3]);
  }
  return total;
}

/**
 * Bytes received by the kernel and not yet read by the process, for each established IPv4 TCP
 * connection whose local port is `port` (the server's side; Linux /proc/net/tcp, rx_queue).
 */
export function unreadBytesByConnection(port: number): number[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length > 4 && f[1]!.endsWith(`:${hexPort}`) && f[3] === '01')
    .map((f) => parseInt(f[4]!.split(':')[1]!, 16));
}
