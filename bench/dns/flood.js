#!/usr/bin/env node
// bench/dns/flood: a DNS UDP flood against real agents (issue 33, finding 6) and what it costs.
//   npx tsc -b packages/cli first, then:
//   node bench/dns/flood.js [--senders 4] [--rate 200000] [--duration 20] [--target client|server] [--keep-logs]
// Starts one server and one client agent joined to it (real processes, free loopback ports),
// registers `web` with 5 instances, then `--senders` processes each send up to `--rate` queries/s
// (SRV and A for `web.service.registry`, A for the server's node) to the target's DNS port for
// `--duration` seconds, reading no answer. Prints both agents' RSS before, at the peak and after,
// the time from the flood's end until the target answers DNS (UDP) and HTTP again, the queries
// actually sent and the ones the target shed (registry_dns_udp_shed_total).
// Budgets (issue 33): RSS +< 128 MiB on each agent, DNS and HTTP back within 2 s.
// Bounded: every phase has a deadline; the agents and senders are killed by their own PIDs.
'use strict';
const { fork, spawn } = require('node:child_process');
const dgram = require('node:dgram');
const { closeSync, mkdtempSync, openSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const dnsPacket = require('dns-packet');
const { CLI, REPO, argOf, freePort, sleep } = require('../support');

const RSS_BUDGET_MIB = 128;
const BACK_BUDGET_MS = 2000;

function query(name, type) {
  return dnsPacket.encode({ type: 'query', id: Math.floor(Math.random() * 65536), flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] });
}

// --- a sender process: `--sender <port> <rate> <seconds>`; reports how many it sent.
if (process.argv[2] === '--sender') {
  const [port, rate, seconds] = process.argv.slice(3).map(Number);
  const msgs = [query('web.service.registry', 'SRV'), query('web.service.registry', 'A'), query('flood-server.node.registry', 'A')];
  const sock = dgram.createSocket('udp4');
  sock.on('error', () => undefined);
  const TICK_MS = 10;
  let sent = 0;
  sock.connect(port, '127.0.0.1', () => {
    const start = Date.now();
    const until = start + seconds * 1000;
    const tick = () => {
      const now = Date.now();
      if (now >= until) {
        sock.close();
        process.send({ sent }, () => process.exit(0));
        return;
      }
      // Catch up to the rate, at most two ticks' worth at once (so the flood ends on time), and
      // never queue more than a few thousand sends in libuv.
      const due = Math.min(Math.floor(((now - start) / 1000) * rate) - sent, Math.ceil((rate * TICK_MS * 2) / 1000));
      for (let i = 0; i < due && sock.getSendQueueCount() < 4096; i++) {
        const m = msgs[sent % msgs.length];
        m.writeUInt16BE(sent & 0xffff, 0);
        sock.send(m);
        sent++;
      }
      setTimeout(tick, TICK_MS);
    };
    tick();
  });
  return;
}

const rssMiB = (pid) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function startAgent(dir, name, extra) {
  const [http, dns, server] = [await freePort(), await freePort(), await freePort()];
  const args = [CLI, 'agent', ...extra, '-node', name, '-data-dir', join(dir, name), '-bind', '127.0.0.1', '-client', '127.0.0.1',
    '-http-port', String(http), '-dns-port', String(dns), '-server-port', String(server), '-log-level', 'info'];
  const log = openSync(join(dir, `${name}.log`), 'a');
  const child = spawn(process.execPath, args, { stdio: ['ignore', log, log] });
  closeSync(log);
  const a = { name, child, pid: child.pid, http: `http://127.0.0.1:${http}`, dns, server };
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await dnsAnswers(a, 500)) return a;
    await sleep(200);
  }
  throw new Error(`${name} did not answer DNS within 30 s`);
}

/** Whether `a` answers a UDP query for its own node within `ms`. */
function dnsAnswers(a, ms) {
  return new Promise((resolve) => {
    const sock = dgram.createSocket('udp4');
    const done = (ok) => {
      clearTimeout(timer);
      sock.close();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), ms);
    sock.on('error', () => done(false));
    sock.on('message', (m) => done(dnsPacket.decode(m).answers.length > 0));
    sock.send(query(`${a.name}.node.registry`, 'A'), a.dns, '127.0.0.1');
  });
}

async function httpAnswers(a, ms) {
  try {
    const res = await fetch(`${a.http}/v1/catalog/services`, { signal: AbortSignal.timeout(ms) });
    return res.status === 200;
  } catch {
    return false;
  }
}

async function shed(a) {
  try {
    const text = await (await fetch(`${a.http}/v1/agent/metrics?format=prometheus`, { signal: AbortSignal.timeout(5000) })).text();
    const m = /^registry_dns_udp_shed_total (\S+)$/m.exec(text);
    return m ? Number(m[1]) : 'n/a';
  } catch {
    return 'n/a';
  }
}

async function main() {
  const senders = Number(argOf('--senders', 4));
  const rate = Number(argOf('--rate', 200_000));
  const duration = Number(argOf('--duration', 20));
  const targetName = argOf('--target', 'client');
  const dir = mkdtempSync(join(tmpdir(), 'registry-dns-flood-'));
  const agents = [];
  const kids = [];
  try {
    const server = await startAgent(dir, 'flood-server', ['-server', '-bootstrap-expect', '1']);
    agents.push(server);
    const client = await startAgent(dir, 'flood-client', ['-retry-join', `127.0.0.1:${server.server}`]);
    agents.push(client);
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${server.http}/v1/catalog/register`, { method: 'PUT', body: JSON.stringify({ Node: `web-${i}`, Address: `10.0.0.${i + 1}`, Service: { Service: 'web', Port: 80 } }) });
      if (r.status !== 200) throw new Error(`register: ${r.status}`);
    }
    const target = targetName === 'server' ? server : client;
    const before = Object.fromEntries(agents.map((a) => [a.name, rssMiB(a.pid)]));
    const peak = { ...before };
    console.log(`flooding ${target.name} (UDP ${target.dns}): ${senders} senders × ${rate} q/s for ${duration} s`);

    const reports = [];
    const finished = [];
    for (let i = 0; i < senders; i++) {
      const k = fork(__filename, ['--sender', String(target.dns), String(rate), String(duration)], { stdio: 'ignore' });
      kids.push(k);
      finished.push(new Promise((resolve) => {
        k.on('message', (m) => reports.push(m));
        k.on('exit', resolve);
      }));
    }
    const sampler = setInterval(() => {
      for (const a of agents) {
        try {
          peak[a.name] = Math.max(peak[a.name], rssMiB(a.pid));
        } catch {
          // exited: reported below
        }
      }
    }, 250);
    await Promise.race([Promise.all(finished), sleep((duration + 30) * 1000)]);
    const ended = Date.now();
    const back = {};
    await Promise.all(
      [['dns', (ms) => dnsAnswers(target, ms)], ['http', (ms) => httpAnswers(target, ms)]].map(async ([what, probe]) => {
        while (Date.now() - ended < 60_000) {
          if (await probe(500)) {
            back[what] = Date.now() - ended;
            return;
          }
          await sleep(50);
        }
        back[what] = Infinity;
      }),
    );
    clearInterval(sampler);
    await sleep(2000);
    const after = Object.fromEntries(agents.map((a) => [a.name, rssMiB(a.pid)]));
    const sent = reports.reduce((n, r) => n + r.sent, 0);
    const result = {
      target: target.name,
      sentQueries: sent,
      sentPerSecond: Math.round(sent / duration),
      shedByTarget: await shed(target),
      rssMiB: Object.fromEntries(agents.map((a) => [a.name, { before: +before[a.name].toFixed(1), peak: +peak[a.name].toFixed(1), after: +after[a.name].toFixed(1), grew: +(peak[a.name] - before[a.name]).toFixed(1) }])),
      backAfterMs: back,
    };
    const ok = agents.every((a) => peak[a.name] - before[a.name] < RSS_BUDGET_MIB) && back.dns <= BACK_BUDGET_MS && back.http <= BACK_BUDGET_MS;
    console.log(JSON.stringify(result, null, 2));
    console.log(`budgets (RSS +< ${RSS_BUDGET_MIB} MiB on each agent, DNS and HTTP back within ${BACK_BUDGET_MS} ms): ${ok ? 'met' : 'NOT met'}`);
    process.exitCode = ok ? 0 : 1;
  } finally {
    for (const k of kids) if (k.exitCode === null) k.kill('SIGKILL');
    for (const a of agents.reverse()) {
      a.child.kill('SIGKILL');
    }
    await sleep(200);
    if (process.argv.includes('--keep-logs')) console.log(`agent logs kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
