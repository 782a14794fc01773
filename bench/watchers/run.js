#!/usr/bin/env node
// bench/watchers (issue #14, "A large catalog"): one registry server holding S services (one
// instance each, on its own node) and W blocked watchers — `GET /v1/health/service/<svc>?index=
// <its index>&wait=10m`, W/S per service — then R writes, each re-registering one service's
// instance (its port changes), R different services spread over the S. It reports:
//   - the server's RSS (and V8 heap) before the watchers and with all W blocked (its metrics'
//     registry.rpc.queries_blocking gauge at W), after a 5 s settle;
//   - per write, the time from sending it to the last of its service's watchers answering
//     (median and max over the R writes), and to the write's own answer;
//   - answers per service: every watcher of a written service answered once, and no watcher of
//     another service answered at all.
// Watchers live in --procs processes (watcher.js), each on its own keep-alive connections from
// several 127.0.0.x source addresses.
//
// How the watchers reach the server (--via):
//   direct — straight to the server's HTTP port. A connection is a descriptor on both ends, and
//            this box's hard RLIMIT_NOFILE is 20,000 (a container: root cannot raise it), so the
//            server takes at most ~13,100 HTTP connections (its cap, limits/descriptor-budget.ts):
//            W is capped to that (the script says so);
//   agents — through --agents client agents (`registry agent` without -server, joined to the
//            server), W/agents watchers each: every HTTP watcher of an agent is one blocking read
//            it forwards to the server over its one RPC link, so the server holds all W blocking
//            queries (Consul's layout: applications watch their local agent). The wake time then
//            includes the agent's hop.
//
//   npm run build && node bench/watchers/run.js [--via agents|direct] [--services 5000]
//       [--watchers 50000] [--writes 20] [--procs 4] [--agents 4]
//   (REGISTRY_CLUSTER_BIN: another build's bin/registry.js)
//
// The script re-runs itself under `ulimit -n <hard limit>` (Node cannot raise its own limit; the
// server sizes its connection cap from it). Every wait is bounded; only the processes it starts
// are stopped (by their pid), and its temp folder is removed.
'use strict';
const { spawn, fork, spawnSync } = require('node:child_process');
const http = require('node:http');
const { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, openSync, closeSync } = require('node:fs');
const { tmpdir, loadavg } = require('node:os');
const { join } = require('node:path');
const { freePort, sleep } = require('../support');

if (process.env.BENCH_WATCHERS_ULIMIT !== '1') {
  const r = spawnSync('bash', ['-c', 'ulimit -n "$(ulimit -Hn)" && exec "$0" "$@"', process.execPath, __filename, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_WATCHERS_ULIMIT: '1' },
  });
  process.exit(r.status ?? 1);
}

const REPO = join(__dirname, '..', '..');
// REGISTRY_CLUSTER_BIN runs another build (as scripts/cluster.sh does), e.g. a frozen copy of a commit.
const BIN = process.env.REGISTRY_CLUSTER_BIN || join(REPO, 'packages/cli/bin/registry.js');
const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const VIA = arg('--via', 'agents');
const SERVICES = Number(arg('--services', '5000'));
const WRITES = Number(arg('--writes', '20'));
const PROCS = Number(arg('--procs', '4'));
const AGENTS = Number(arg('--agents', '4'));
const DIRECT_CAP = 13_000; // below the server's derived cap at RLIMIT_NOFILE 20,000 (13,148; 15,648 before the server port took its share)
let WATCHERS = Number(arg('--watchers', '50000'));
const load1 = () => loadavg()[0].toFixed(1);

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 32 });
function call(base, method, path, body, timeoutMs = 30_000) {
  const url = new URL(path, base);
  if (url.hostname !== '127.0.0.1') throw new Error(`refusing non-loopback target ${base}`);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: keepAlive, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

function rssMiB(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return NaN;
  }
}

/** A gauge of the agent's JSON metrics by the end of its name (gauge names may carry the hostname). */
async function gauge(base, suffix) {
  const r = await call(base, 'GET', '/v1/agent/metrics', undefined, 10_000);
  const g = JSON.parse(r.body).Gauges.find((x) => x.Name.endsWith(suffix));
  return g ? g.Value : NaN;
}

const children = [];
function startAgent(dir, name, args) {
  const log = openSync(join(dir, `${name}.log`), 'a');
  try {
    const child = spawn(process.execPath, [BIN, 'agent', ...args, '-log-level', 'warn'], { cwd: REPO, stdio: ['ignore', log, log] });
    children.push(child);
    return child;
  } finally {
    closeSync(log);
  }
}

async function until(what, fn, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await fn()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(200);
  }
}

(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-watchers-'));
  const lines = [];
  const record = (line) => {
    console.log(line);
    lines.push(line);
  };
  const procs = [];
  try {
    const nofile = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))[1];
    if (VIA === 'direct' && WATCHERS > DIRECT_CAP) {
      record(`NOTE ${WATCHERS} direct connections do not fit RLIMIT_NOFILE ${nofile} (the server caps HTTP connections at ~15,600): ${DIRECT_CAP} watchers instead`);
      WATCHERS = DIRECT_CAP;
    }
    record(`# ${new Date().toISOString()} bench/watchers via=${VIA} services=${SERVICES} watchers=${WATCHERS} writes=${WRITES} procs=${PROCS}${VIA === 'agents' ? ` agents=${AGENTS}` : ''} nofile=${nofile} load=${load1()}`);
    const httpPort = await freePort();
    const serverPort = await freePort();
    const server = startAgent(dir, 'server', ['-server', '-bootstrap-expect', '1', '-node', 'srv', '-data-dir', join(dir, 'srv'), '-bind', '127.0.0.1', '-client', '127.0.0.1', '-http-port', String(httpPort), '-server-port', String(serverPort), '-dns-port', '-1']);
    const base = `http://127.0.0.1:${httpPort}`;
    await until('server leader', async () => (await call(base, 'GET', '/v1/status/leader')).body.length > 4, 30_000);
    await until('first write', async () => (await call(base, 'PUT', '/v1/kv/warm', 'x')).status === 200, 30_000);

    // S services, one instance each on its own node (64 ops a transaction: 32 nodes with their service).
    const svc = (s) => `svc-${String(s).padStart(4, '0')}`;
    const register = (s, port) => ({ Node: `n-${s}`, Address: `10.3.${s >> 8}.${s & 255}`, Service: { ID: svc(s), Service: svc(s), Port: port } });
    for (let s = 0; s < SERVICES; s += 32 * 8) {
      await Promise.all(Array.from({ length: 8 }, async (_, k) => {
        const first = s + k * 32;
        const ops = [];
        for (let i = first; i < Math.min(first + 32, SERVICES); i++) {
          const r = register(i, 1000);
          ops.push({ Node: { Verb: 'set', Node: { Node: r.Node, Address: r.Address } } }, { Service: { Verb: 'set', Node: r.Node, Service: r.Service } });
        }
        if (ops.length === 0) return;
        const r = await call(base, 'PUT', '/v1/txn', ops);
        if (r.status !== 200) throw new Error(`txn: ${r.status} ${r.body}`);
      }));
    }
    // Each service's own index: a watcher blocks until its service changes past it.
    const services = [];
    for (let s = 0; s < SERVICES; s += 100) {
      const got = await Promise.all(Array.from({ length: Math.min(100, SERVICES - s) }, (_, k) => call(base, 'GET', `/v1/health/service/${svc(s + k)}`)));
      got.forEach((r, k) => {
        if (r.status !== 200 || JSON.parse(r.body).length !== 1) throw new Error(`svc ${s + k}: ${r.status} ${r.body.slice(0, 200)}`);
        services.push([svc(s + k), Number(r.headers['x-registry-index'])]);
      });
    }
    await sleep(5000);
    record(`RSS server with ${SERVICES} services, no watchers: ${rssMiB(server.pid).toFixed(0)} MiB (heap ${(Number(await gauge(base, 'runtime.heap_used_bytes')) / 2 ** 20).toFixed(0)} MiB) load=${load1()}`);

    // Where the watchers point: the server, or the client agents.
    const targets = [];
    const agents = [];
    if (VIA === 'agents') {
      for (let a = 0; a < AGENTS; a++) {
        const p = await freePort();
        mkdirSync(join(dir, `c${a}`), { recursive: true });
        agents.push(startAgent(dir, `c${a}`, ['-node', `c${a}`, '-data-dir', join(dir, `c${a}`), '-bind', '127.0.0.1', '-client', '127.0.0.1', '-http-port', String(p), '-dns-port', '-1', '-retry-join', `127.0.0.1:${serverPort}`]));
        targets.push(`http://127.0.0.1:${p}`);
      }
      for (const t of targets) await until(`agent ${t} joined`, async () => (await call(t, 'GET', `/v1/health/service/${svc(0)}`)).status === 200, 60_000);
    } else {
      targets.push(base);
    }

    // Watchers: process p takes [p*W/P, (p+1)*W/P) and points at targets[p % targets.length].
    const woke = new Map(); // service → [hrtime ns]
    const problems = new Map(); // error message or non-200 answer → count
    const lost = new Map(); // service → its watchers that failed (never blocked)
    const tally = (what) => problems.set(what, (problems.get(what) ?? 0) + 1);
    let errors = 0;
    let retries = 0;
    let statusNot200 = 0;
    const armed = [];
    for (let p = 0; p < PROCS; p++) {
      const first = Math.floor((p * WATCHERS) / PROCS);
      const count = Math.floor(((p + 1) * WATCHERS) / PROCS) - first;
      // Two source addresses per process: a server caps connections per client address (half its cap).
      const sources = [`127.0.0.${2 + 2 * p}`, `127.0.0.${3 + 2 * p}`];
      const job = { url: targets[p % targets.length], sources, services, first, count, wait: '10m' };
      const child = fork(join(__dirname, 'watcher.js'), [JSON.stringify(job)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      procs.push(child);
      armed.push(
        new Promise((resolve) => {
          child.on('message', (m) => {
            if (m.type === 'woke') {
              if (!woke.has(m.service)) woke.set(m.service, []);
              woke.get(m.service).push(BigInt(m.t));
              if (m.status !== 200) {
                statusNot200++;
                tally(`${m.status} ${m.body}`);
              }
            } else if (m.type === 'error') {
              errors++;
              lost.set(m.service, (lost.get(m.service) ?? 0) + 1);
              tally(m.message);
            }
            else if (m.type === 'retry') retries++;
            else if (m.type === 'armed') resolve(m);
          });
        }),
      );
    }
    const armedInfo = await Promise.race([Promise.all(armed), sleep(180_000).then(() => null)]);
    if (!armedInfo) throw new Error('watchers not all sent within 180 s');
    const t0 = Date.now();
    let blocked = 0;
    await until(`${WATCHERS} blocking queries on the server`, async () => (blocked = await gauge(base, 'rpc.queries_blocking')) >= WATCHERS, 180_000).catch((err) => {
      record(`WARN ${err.message} (server holds ${blocked}; watcher errors ${errors})`);
    });
    record(`ARMED ${blocked} blocking queries on the server (${((Date.now() - t0) / 1000).toFixed(1)} s after the last request was sent); watcher errors ${errors} (after ${retries} re-sends of failed requests), early answers ${[...woke.values()].reduce((a, v) => a + v.length, 0)} load=${load1()}`);
    await sleep(5000);
    const agentRss = agents.map((a) => rssMiB(a.pid).toFixed(0)).join(', ');
    const watcherRss = armedInfo.map((m) => m.rssMiB.toFixed(0)).join(', ');
    record(`RSS server with ${blocked} blocked watchers on ${SERVICES} services: ${rssMiB(server.pid).toFixed(0)} MiB (heap ${(Number(await gauge(base, 'runtime.heap_used_bytes')) / 2 ** 20).toFixed(0)} MiB)${agents.length ? `; client agents ${agentRss} MiB` : ''}; watcher processes ${watcherRss} MiB load=${load1()}`);

    // R writes to R services spread over the S, one at a time.
    const before = [...woke.values()].reduce((a, v) => a + v.length, 0);
    const earlyOf = new Map([...woke.entries()].map(([service, times]) => [service, times.length]));
    const perService = WATCHERS / SERVICES;
    const written = new Set();
    const wakes = [];
    let expected = 0;
    const acks = [];
    for (let j = 0; j < WRITES; j++) {
      const s = (j * Math.floor(SERVICES / WRITES) + 7) % SERVICES;
      written.add(svc(s));
      const sent = process.hrtime.bigint();
      const r = await call(base, 'PUT', '/v1/catalog/register', register(s, 2000 + j));
      const acked = process.hrtime.bigint();
      if (r.status !== 200) throw new Error(`write: ${r.status} ${r.body}`);
      // Its watchers still blocked: those that neither failed nor answered before the write.
      const early = woke.get(svc(s))?.length ?? 0;
      const expect = perService - early - (lost.get(svc(s)) ?? 0);
      const deadline = Date.now() + 10_000;
      while ((woke.get(svc(s))?.length ?? 0) - early < expect && Date.now() < deadline) await sleep(2);
      const times = (woke.get(svc(s)) ?? []).slice(early);
      const last = times.reduce((a, t) => (t > a ? t : a), 0n);
      wakes.push(expect === 0 ? NaN : times.length >= expect ? Number(last - sent) / 1e6 : Infinity);
      expected += expect;
      acks.push(Number(acked - sent) / 1e6);
      await sleep(300);
    }
    await sleep(2000);
    // Answers after the writes began, per service (answers before them were counted in `before`).
    let others = 0;
    let ofWritten = 0;
    for (const [service, times] of woke) {
      const after = times.length - (earlyOf.get(service) ?? 0);
      if (written.has(service)) ofWritten += after;
      else others += after;
    }
    const sorted = wakes.filter((w) => !Number.isNaN(w)).sort((a, b) => a - b);
    const med = (xs) => xs[Math.floor(xs.length / 2)];
    record(
      `WAKE ${WRITES} writes, ${perService} watchers each: write sent → its last watcher answered median ${med(sorted).toFixed(1)} ms, max ${sorted[sorted.length - 1].toFixed(1)} ms ` +
        `(write answered median ${med([...acks].sort((a, b) => a - b)).toFixed(1)} ms); answers from written services ${ofWritten} of ${expected} still blocked (${WRITES * perService} armed); ` +
        `answers from other services ${others}; answered before any write ${before}; non-200 ${statusNot200}; watcher errors ${errors} load=${load1()}`,
    );
    record(`WAKE-ALL ${wakes.map((w) => w.toFixed(1)).join(' ')}`);
    record(`ACK-ALL ${acks.map((w) => w.toFixed(1)).join(' ')}`);
    for (const [what, count] of [...problems.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5)) record(`PROBLEM ×${count}: ${what}`);
  } finally {
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    keepAlive.destroy();
    await sleep(500);
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(lines.join('\n'));
})().catch((err) => {
  console.error(err);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  process.exit(1);
});
