#!/usr/bin/env node
// bench/dns: UDP queries per second against the DNS interface of one dev agent (a real process).
//   npx tsc -b packages/cli first, then: node bench/dns/run.js [--duration 5] [--concurrency 64] [--instances 5]
// 64 closed-loop clients (one UDP socket each, one query in flight each) ask
// `web.service.registry` A, then SRV, then a prepared query (`webq.query.registry` A), each for
// --duration seconds after a 1 s warm-up. Prints queries/s, p50/p99 latency and timeouts.
// Every phase is bounded in time; the agent is killed by its own PID at the end.
'use strict';
const { spawn } = require('node:child_process');
const dgram = require('node:dgram');
const { join } = require('node:path');
const dnsPacket = require('dns-packet');
const { freePort, sleep } = require('../support');

const REPO = join(__dirname, '..', '..');
const arg = (name, dflt) => Number(process.argv[process.argv.indexOf(name) + 1]) || dflt;
const DURATION = arg('--duration', 5);
const CONCURRENCY = arg('--concurrency', 64);
const INSTANCES = arg('--instances', 5);
const TIMEOUT_MS = 1000;

async function call(base, method, path, body) {
  const res = await fetch(base + path, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** One client: a socket, one query in flight, until `until`. */
async function client(port, name, type, until, stats) {
  const sock = dgram.createSocket('udp4');
  await new Promise((r) => sock.bind(0, '127.0.0.1', r));
  let id = Math.floor(Math.random() * 65536);
  let pending = null;
  sock.on('message', (msg) => {
    if (pending && msg.readUInt16BE(0) === pending.id) {
      const p = pending;
      pending = null;
      p.resolve(msg);
    }
  });
  try {
    while (Date.now() < until) {
      id = (id + 1) & 0xffff;
      const query = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] });
      const started = process.hrtime.bigint();
      const reply = await new Promise((resolve) => {
        const timer = setTimeout(() => {
          pending = null;
          resolve(null);
        }, TIMEOUT_MS);
        pending = { id, resolve: (m) => (clearTimeout(timer), resolve(m)) };
        sock.send(query, port, '127.0.0.1');
      });
      if (!reply) {
        stats.timeouts++;
        continue;
      }
      const rcode = reply.readUInt16BE(2) & 0xf;
      if (rcode !== 0 || reply.readUInt16BE(6) === 0) stats.errors++;
      stats.latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  } finally {
    sock.close();
  }
}

async function phase(port, label, name, type) {
  await Promise.all(Array.from({ length: CONCURRENCY }, () => client(port, name, type, Date.now() + 1000, { latencies: [], timeouts: 0, errors: 0 })));
  const stats = { latencies: [], timeouts: 0, errors: 0 };
  const started = Date.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, () => client(port, name, type, started + DURATION * 1000, stats)));
  const seconds = (Date.now() - started) / 1000;
  const sorted = stats.latencies.sort((a, b) => a - b);
  const pct = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))].toFixed(2) : '-');
  return { label, qps: Math.round(sorted.length / seconds), p50: pct(0.5), p99: pct(0.99), timeouts: stats.timeouts, errors: stats.errors };
}

async function main() {
  const httpPort = await freePort();
  const serverPort = await freePort();
  const dnsPort = await freePort();
  const child = spawn(
    process.execPath,
    [join(REPO, 'packages/cli/bin/registry.js'), 'agent', '-dev', '-node', 'bench', '-http-port', String(httpPort), '-server-port', String(serverPort),
      '-dns-port', String(dnsPort), '-log-level', 'warn'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const base = `http://127.0.0.1:${httpPort}`;
  try {
    for (let i = 0; ; i++) {
      if (i > 200) throw new Error('agent did not start');
      try {
        if ((await call(base, 'GET', '/v1/status/leader')) !== '') break;
      } catch {
        // not yet
      }
      await sleep(50);
    }
    for (let i = 0; i < INSTANCES; i++) {
      await call(base, 'PUT', '/v1/catalog/register', { Node: `n${i}`, Address: `10.0.0.${i + 1}`, Service: { Service: 'web', Port: 8000 + i } });
    }
    await call(base, 'POST', '/v1/query', { Name: 'webq', Service: { Service: 'web' } });
    const rows = [];
    rows.push(await phase(dnsPort, 'web.service.registry A', 'web.service.registry', 'A'));
    rows.push(await phase(dnsPort, 'web.service.registry SRV', 'web.service.registry', 'SRV'));
    rows.push(await phase(dnsPort, 'webq.query.registry A', 'webq.query.registry', 'A'));
    console.log(`\nUDP, ${CONCURRENCY} clients, ${INSTANCES} instances, ${DURATION} s per row, Node ${process.version}\n`);
    console.log('| query | queries/s | p50 ms | p99 ms | timeouts | errors |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.label} | ${r.qps} | ${r.p50} | ${r.p99} | ${r.timeouts} | ${r.errors} |`);
  } finally {
    child.kill('SIGKILL');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
