#!/usr/bin/env node
// bench/dns/fast-flood: the DNS UDP flood at the rate (issue 33, finding 6) against
// one dev agent, with C senders (udp-sender.c) instead of Node ones (flood.js reaches ~30k q/s here).
//   npx tsc -b packages/cli first, then:
//   node bench/dns/fast-flood.js [--senders 4] [--rate 200000] [--duration 20] [--limits '{"dns_udp_max_pending":1024}'] [--keep-logs]
// Compiles udp-sender.c with gcc into a temporary directory (removed at the end; nothing is
// committed), starts `registry agent -dev` on free loopback ports, registers `web` with 5
// instances, then runs `--senders` sender processes, each paced to `--rate` queries/s offered, for
// `--duration` s at the agent's DNS UDP port. Samples the agent's VmRSS every 100 ms throughout;
// after the flood, measures the time until `dig` gets an answer from the DNS port and until an HTTP
// GET (/v1/catalog/services) answers 200. Prints what each sender offered, the totals, the RSS
// before / peak / after, the kernel's UDP receive-buffer drops and the agent's shed counter.
// Budgets (issue 33): RSS +< 128 MiB; DNS and HTTP back within 2 s of the flood's end.
// Bounded: every phase has a deadline; the agent and senders are killed by their own PIDs.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { CLI, REPO, argOf, freePort, sleep } = require('../support');

const RSS_BUDGET_MIB = 128;
const BACK_BUDGET_MS = 2000;

const rssMiB = (pid) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/** The kernel's UDP counters (/proc/net/snmp): datagrams dropped for a full receive buffer. */
function udpRcvbufErrors() {
  const lines = readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((l) => l.startsWith('Udp:'));
  const names = lines[0].split(/\s+/);
  const values = lines[1].split(/\s+/);
  return Number(values[names.indexOf('RcvbufErrors')]);
}

/** CPU seconds (user + system) a process has used (/proc/<pid>/stat, in clock ticks of 1/100 s). */
function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** Datagrams the kernel dropped for the UDP socket bound to 127.0.0.1:`port` (/proc/net/udp, drops). */
function socketDrops(port) {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const line of readFileSync('/proc/net/udp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1] === local) return Number(f[12]);
  }
  return 0;
}

/** Compiles the sender into `dir` and returns its path (gcc must be installed). */
function compileSender(dir) {
  const out = join(dir, 'udp-sender');
  execFileSync('gcc', ['-O2', '-Wall', '-o', out, join(__dirname, 'udp-sender.c')], { stdio: 'inherit' });
  return out;
}

/** Runs `dig` once (one try, 1 s): resolves true when it got an answer with records. */
function digAnswers(port) {
  return new Promise((resolve) => {
    const k = spawn('dig', ['@127.0.0.1', '-p', String(port), 'web.service.registry', 'A', '+tries=1', '+time=1', '+short'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    k.stdout.on('data', (d) => (out += d));
    const killer = setTimeout(() => k.kill('SIGKILL'), 3000);
    k.on('exit', (code) => {
      clearTimeout(killer);
      resolve(code === 0 && /^\d+\.\d+\.\d+\.\d+$/m.test(out));
    });
  });
}

async function httpAnswers(url) {
  try {
    const res = await fetch(`${url}/v1/catalog/services`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * Ms from `from` until `probe` first succeeds: a new try every `everyMs` (tries overlap, so one that
 * hangs on a lost datagram does not hide the next one answering), for at most 30 s.
 */
function timeUntil(from, probe, everyMs) {
  return new Promise((resolve) => {
    let done = false;
    const tries = [];
    const finish = (v) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve(v);
    };
    const attempt = () => tries.push(probe().then((ok) => ok && finish(Date.now() - from)));
    const timer = setInterval(attempt, everyMs);
    const giveUp = setTimeout(() => Promise.allSettled(tries).then(() => finish(Infinity)), 30_000);
    attempt();
  });
}

async function metric(url, name) {
  try {
    const text = await (await fetch(`${url}/v1/agent/metrics?format=prometheus`, { signal: AbortSignal.timeout(5000) })).text();
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : 0;
  } catch {
    return 'n/a';
  }
}

async function startDevAgent(dir, limits) {
  const [http, dns, server] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ limits, telemetry: { prometheus_retention_time: '60s' } }));
  const args = [CLI, 'agent', '-dev', '-node', 'flood-dev', '-bind', '127.0.0.1', '-client', '127.0.0.1',
    '-http-port', String(http), '-dns-port', String(dns), '-server-port', String(server), '-config-file', config, '-log-level', 'info'];
  const log = openSync(join(dir, 'agent.log'), 'a');
  const child = spawn(process.execPath, args, { stdio: ['ignore', log, log] });
  closeSync(log);
  const a = { child, pid: child.pid, url: `http://127.0.0.1:${http}`, dns };
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (await httpAnswers(a.url)) return a;
    await sleep(200);
  }
  throw new Error(`the agent did not answer HTTP within 30 s (log: ${join(dir, 'agent.log')})`);
}

async function main() {
  const senders = Number(argOf('--senders', 4));
  const rate = Number(argOf('--rate', 200_000));
  const duration = Number(argOf('--duration', 20));
  const limits = JSON.parse(argOf('--limits', '{}'));
  if (!(duration > 0 && duration <= 120)) throw new Error('--duration must be within 1..120 s');
  const dir = mkdtempSync(join(tmpdir(), 'registry-fast-flood-'));
  let agent;
  const kids = [];
  try {
    const sender = compileSender(dir);
    agent = await startDevAgent(dir, limits);
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${agent.url}/v1/catalog/register`, { method: 'PUT', body: JSON.stringify({ Node: `web-${i}`, Address: `10.0.0.${i + 1}`, Service: { Service: 'web', Port: 80 } }) });
      if (r.status !== 200) throw new Error(`register: ${r.status}`);
    }
    if (!(await digAnswers(agent.dns))) throw new Error('dig gets no answer before the flood');
    await sleep(1000);
    const before = rssMiB(agent.pid);
    let peak = before;
    const samples = [];
    const t0 = Date.now();
    const sampler = setInterval(() => {
      try {
        const v = rssMiB(agent.pid);
        peak = Math.max(peak, v);
        samples.push([Date.now() - t0, v]);
      } catch {
        // exited: reported below
      }
    }, 100);
    const dropsBefore = udpRcvbufErrors();
    const socketDropsBefore = socketDrops(agent.dns);
    const cpuBefore = cpuSeconds(agent.pid);
    const shedBefore = await metric(agent.url, 'registry_dns_udp_shed_total');
    console.log(`flooding the dev agent (UDP 127.0.0.1:${agent.dns}, pid ${agent.pid}): ${senders} senders × ${rate} q/s offered for ${duration} s`);

    const reports = [];
    const finished = [];
    for (let i = 0; i < senders; i++) {
      const k = spawn(sender, [String(agent.dns), String(rate), String(duration), String(i + 1)], { stdio: ['ignore', 'pipe', 'inherit'] });
      kids.push(k);
      let out = '';
      k.stdout.on('data', (d) => (out += d));
      finished.push(new Promise((resolve) => {
        const killer = setTimeout(() => k.kill('SIGKILL'), (duration + 10) * 1000);
        k.on('exit', () => {
          clearTimeout(killer);
          try {
            reports.push(JSON.parse(out));
          } catch {
            reports.push({ seed: i + 1, offered: 0, error: out });
          }
          resolve();
        });
      }));
    }
    await Promise.all(finished);
    const ended = Date.now();
    const agentCpu = cpuSeconds(agent.pid) - cpuBefore;
    const [dnsBack, httpBack] = await Promise.all([timeUntil(ended, () => digAnswers(agent.dns), 100), timeUntil(ended, () => httpAnswers(agent.url), 100)]);
    const drops = udpRcvbufErrors() - dropsBefore;
    const agentSocketDrops = socketDrops(agent.dns) - socketDropsBefore;
    await sleep(2000);
    clearInterval(sampler);
    const after = rssMiB(agent.pid);
    const shed = (await metric(agent.url, 'registry_dns_udp_shed_total')) - shedBefore;
    const offered = reports.reduce((n, r) => n + r.offered, 0);
    const perSecond = (s) => samples.filter(([t]) => t >= s * 1000 && t < (s + 1) * 1000).reduce((m, [, v]) => Math.max(m, v), 0);
    const result = {
      machine: `${require('node:os').cpus().length} cores, ${require('node:os').cpus()[0]?.model ?? '?'}, load ${require('node:os').loadavg().map((l) => l.toFixed(1)).join(' ')}`,
      senders: reports.map((r) => ({ seed: r.seed, offeredPerSecond: r.offeredPerSecond, sendErrors: r.sendErrors })),
      offeredTotal: offered,
      offeredPerSecondTotal: Math.round(offered / duration),
      offeredShareOfTarget: +(offered / (senders * rate * duration)).toFixed(3),
      // Every UDP receive-buffer drop on the machine (the agent's socket, and its answers dropped at
      // the senders' sockets, which never read), then the agent's socket alone.
      kernelRcvbufDrops: drops,
      droppedAtAgentSocket: agentSocketDrops,
      readByAgent: offered - agentSocketDrops,
      readByAgentPerSecond: Math.round((offered - agentSocketDrops) / duration),
      shedByAgent: shed,
      // The agent's share of a core during the flood: on a machine where the senders take the
      // cores, what it reads is bounded by the CPU it gets, not by its own work queue.
      agentCpuShareOfOneCore: +(agentCpu / duration).toFixed(2),
      rssMiB: { before: +before.toFixed(1), peak: +peak.toFixed(1), after: +after.toFixed(1), grew: +(peak - before).toFixed(1) },
      rssPeakBySecond: Array.from({ length: Math.ceil(duration) + 1 }, (_, s) => +perSecond(s).toFixed(1)),
      backAfterMs: { dns: dnsBack, http: httpBack },
    };
    const ok = peak - before < RSS_BUDGET_MIB && dnsBack <= BACK_BUDGET_MS && httpBack <= BACK_BUDGET_MS;
    console.log(JSON.stringify(result, null, 2));
    console.log(`budgets (RSS +< ${RSS_BUDGET_MIB} MiB, DNS (dig) and HTTP back within ${BACK_BUDGET_MS} ms): ${ok ? 'met' : 'NOT met'}`);
    process.exitCode = ok ? 0 : 1;
  } finally {
    for (const k of kids) if (k.exitCode === null) k.kill('SIGKILL');
    if (agent && agent.child.exitCode === null) agent.child.kill('SIGKILL');
    await sleep(200);
    if (process.argv.includes('--keep-logs')) console.log(`agent log kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
