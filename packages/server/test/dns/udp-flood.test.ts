// A DNS UDP flood (issue 33, finding 6), bounded for CI: four sender processes offer up to
// 200,000 queries/s each (the rate) for 3 s to a client agent, whose every lookup is a read
// from its server — the work that piled up without bound. Where gcc is installed the senders are
// bench/dns/udp-sender.c (sendmmsg; compiled into a temporary directory here), else Node senders
// (two, 2 s: they reach a tenth of the rate). The server is saturated for the length of the flood
// (stopped with SIGSTOP, so that even a slow machine's senders outrun it, and continued as the
// flood ends). Past `limits.dns_udp_max_pending` queries the agent drops datagrams (as a full
// socket buffer would) and counts them; its memory stays within a bound, and DNS and HTTP answer
// again within 2 s of the flood's end, on the client and its server alike.
// (bench/dns/fast-flood.js runs the full 4 × 200,000 q/s for 20 s, nothing stopped.)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../support/processes';
import { eventually } from '../support/wait';
import { assertServes, counter, decode, query, rssMiB, startAgent, udpQuery, type DnsAgent } from './support/dns-process';

jest.setTimeout(60_000);

const RATE = 200_000;
const RSS_BUDGET_MIB = 128;
const BACK_WITHIN_MS = 2_000;

/** The C sender, compiled when gcc is installed (undefined: use the Node sender). */
function compileSender(dir: string): string | undefined {
  const out = join(dir, 'udp-sender');
  const r = spawnSync('gcc', ['-O2', '-o', out, join(REPO, 'bench/dns/udp-sender.c')], { stdio: 'ignore', timeout: 60_000 });
  return r.status === 0 ? out : undefined;
}

const senderDir = mkdtempSync(join(tmpdir(), 'registry-udp-sender-'));
const cSender = compileSender(senderDir);
const SENDERS = cSender ? 4 : 2;
const SECONDS = cSender ? 3 : 2;

/** A Node sender: a connected UDP socket, a few queries sent round-robin at up to `rate`/s for `seconds`. */
const SENDER = `
const dgram = require('node:dgram');
const [port, rate, seconds] = process.argv.slice(1).map(Number);
const msgs = JSON.parse(process.env.QUERIES).map((h) => Buffer.from(h, 'hex'));
const sock = dgram.createSocket('udp4');
sock.on('error', () => undefined);
let sent = 0;
sock.connect(port, '127.0.0.1', () => {
  const start = Date.now();
  const until = start + seconds * 1000;
  const tick = () => {
    const now = Date.now();
    if (now >= until) return sock.close();
    const due = Math.min(Math.floor(((now - start) / 1000) * rate) - sent, Math.ceil(rate / 50));
    for (let i = 0; i < due && sock.getSendQueueCount() < 4096; i++) {
      const m = msgs[sent % msgs.length];
      m.writeUInt16BE(sent & 0xffff, 0);
      sock.send(m);
      sent++;
    }
    setTimeout(tick, 10);
  };
  tick();
});
`;

let server: DnsAgent | undefined;
let client: DnsAgent | undefined;

afterAll(async () => {
  await client?.stop();
  await server?.stop();
  rmSync(senderDir, { recursive: true, force: true });
});

/** Runs the senders against `port` until they exit (bounded: they stop after `SECONDS`). */
async function flood(port: number): Promise<void> {
  const queries = [query('web.service.registry', 'SRV'), query('web.service.registry', 'A'), query('dns-server.node.registry', 'A')].map((b) => b.toString('hex'));
  const kids = Array.from({ length: SENDERS }, (_, i) =>
    cSender
      ? spawn(cSender, [String(port), String(RATE), String(SECONDS), String(i + 1)], { stdio: 'ignore' })
      : spawn(process.execPath, ['-e', SENDER, String(port), String(RATE), String(SECONDS)], { stdio: 'ignore', env: { ...process.env, QUERIES: JSON.stringify(queries) } }),
  );
  await Promise.all(
    kids.map(
      (k) =>
        new Promise<void>((resolve) => {
          const killer = setTimeout(() => k.kill('SIGKILL'), (SECONDS + 10) * 1000);
          k.on('exit', () => {
            clearTimeout(killer);
            resolve();
          });
        }),
    ),
  );
}

/** Milliseconds from now until `probe` succeeds (each try bounded by 500 ms), or Infinity after 30 s. */
async function timeUntil(probe: () => Promise<unknown>): Promise<number> {
  const from = Date.now();
  const ok = await eventually(async () => {
    await probe();
    return true;
  }, 30_000, 50);
  return ok ? Date.now() - from : Infinity;
}

test('a UDP flood at a client agent is shed past dns_udp_max_pending; DNS and HTTP answer again within 2 s of its end', async () => {
  server = await startAgent();
  client = await startAgent({ joinServer: server, limits: { dns_udp_max_pending: 256 } });
  for (let i = 0; i < 5; i++) {
    const r = await fetch(`${server.url}/v1/catalog/register`, { method: 'PUT', body: JSON.stringify({ Node: `web-${i}`, Address: `10.0.0.${i + 1}`, Service: { Service: 'web', Port: 80 } }) });
    expect(r.status).toBe(200);
  }
  await assertServes(client);
  const before = { client: rssMiB(client.pid), server: rssMiB(server.pid) };

  const s = server;
  process.kill(s.pid, 'SIGSTOP');
  try {
    await flood(client.dnsPort);
  } finally {
    process.kill(s.pid, 'SIGCONT');
  }
  const c = client;
  const [dnsBack, httpBack] = await Promise.all([
    timeUntil(async () => {
      const a = decode(await udpQuery(c.dnsPort, query('web.service.registry', 'A'), 500));
      if (a.answers.length === 0) throw new Error('no answer records');
    }),
    timeUntil(async () => {
      const r = await fetch(`${c.url}/v1/catalog/services`, { signal: AbortSignal.timeout(500) });
      if (r.status !== 200) throw new Error(String(r.status));
    }),
  ]);
  const grown = { client: rssMiB(client.pid) - before.client, server: rssMiB(server.pid) - before.server };
  expect({ dnsBack: dnsBack <= BACK_WITHIN_MS, httpBack: httpBack <= BACK_WITHIN_MS, dnsBackMs: dnsBack, httpBackMs: httpBack }).toEqual({ dnsBack: true, httpBack: true, dnsBackMs: dnsBack, httpBackMs: httpBack });
  expect(grown.client).toBeLessThan(RSS_BUDGET_MIB);
  expect(grown.server).toBeLessThan(RSS_BUDGET_MIB);
  expect(await counter(client, 'registry_dns_udp_shed_total')).toBeGreaterThan(0);
  await assertServes(client);
  await assertServes(server);
});
