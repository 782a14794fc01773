#!/usr/bin/env node
// bench/cluster: three registry servers (scripts/cluster.sh, real processes on 127.0.0.1) beside a
// three-member etcd 3.4 cluster (../shared/peers/etcd), in one session, alternating on fresh
// clusters so background load falls on both:
//   writes    — `PUT /v1/catalog/register` (node + one service, ~130 B, 10,000-node space) to the
//               leader vs etcd puts (8 B key, 256 B value) to its leader; wrk, closed loop, one
//               request in flight per connection, 2 s warm-up discarded, then --duration seconds;
//   failover  — SIGKILL and SIGTERM of the leader under one sequential writer per server,
//               ../shared/peers/etcd/failover-probe.mjs for both systems (time to a new leader and
//               the longest gap between successful writes).
//
//   apt-get install -y etcd-server etcd-client wrk   (once)
//   npm run build && node bench/cluster/run.js [--duration 10] [--conns 1,16,64,256] [--runs 3]
//       [--rounds 5] [--phases writes,failover] [--no-etcd] [--results <file>] [--think-ms N]
//   --think-ms N: every connection waits N ms after each answer (paced.lua) — a paced load both
//   systems can carry, for the tail of a write rather than of a saturated two-core machine.
//
// Each write RESULT line also says what its measured part cost the three servers' processes, per
// request (proc-cost.js, from /proc: threads, csw, cpu_us, runq_us — the time their threads were
// ready to run and waiting for a CPU); the summary prints those as a second table.
// RESULT / FAILOVER lines go to stdout and to --results (default /tmp/bench-cluster-<time>.txt);
// medians across runs are printed as markdown at the end. Every wrk run and probe is bounded in
// time; only the processes this script starts (through the two cluster scripts, by PID) are
// stopped, and every address is on 127.0.0.1. BENCH_CLUSTER_NODE_OPTIONS is passed to the
// registry servers as NODE_OPTIONS; to profile them (Node refuses --cpu-prof there):
//   BENCH_CPU_PROF_DIR=/tmp/prof BENCH_CLUSTER_NODE_OPTIONS="-r $PWD/bench/cluster/cpu-profile.js" node bench/cluster/run.js …
// Other preloads for the same variable: loop-trace.js (event-loop gaps and GC), stage-trace.js (where
// one write's time goes; stage-report.js reads it). BENCH_LOG_LEVEL sets the servers' log level (default
// warn); BENCH_KEEP_LOGS=<dir> keeps each server's log and LevelDB's LOG after the run. Each RESULT line
// carries started=<ISO time> to match it with those logs.
'use strict';
const { execFileSync } = require('node:child_process');
const net = require('node:net');
const { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { sleep } = require('../support');
const { costPerRequest, sample } = require('./proc-cost');

const REPO = join(__dirname, '..', '..');
const CLUSTER = join(REPO, 'scripts', 'cluster.sh');
const ETCD = join(REPO, '..', 'shared', 'peers', 'etcd');
const PROBE = join(ETCD, 'failover-probe.mjs');
const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const DURATION = Number(arg('--duration', '10'));
const CONNS = arg('--conns', '1,16,64,256').split(',').map(Number);
const THINK_MS = Number(arg('--think-ms', '0'));
const RUNS = Number(arg('--runs', '1'));
const ROUNDS = Number(arg('--rounds', '5'));
const PHASES = arg('--phases', 'writes,failover').split(',');
const WITH_ETCD = argAt('--no-etcd') < 0 && existsSync(join(ETCD, 'etcd-cluster.sh'));
const RESULTS = arg('--results', join(tmpdir(), `bench-cluster-${new Date().toISOString().replace(/[:.]/g, '-')}.txt`));

const record = (line) => {
  console.log(line);
  appendFileSync(RESULTS, line + '\n');
};

function portFree(port) {
  return new Promise((res) => {
    const s = net.createServer();
    s.once('error', () => res(false));
    s.listen(port, '127.0.0.1', () => s.close(() => res(true)));
  });
}

/** A base port with three free ports after it, for HTTP and for server RPC. */
async function freeBase() {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 20000);
    const ok = await Promise.all([0, 1, 2, 100, 101, 102].map((d) => portFree(base + d)));
    if (ok.every(Boolean)) return base;
  }
  throw new Error('no free ports found');
}

/** A registry cluster through scripts/cluster.sh; `cmd` runs one of its sub-commands. */
async function startRegistry() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cluster-'));
  const base = await freeBase();
  const env = {
    ...process.env,
    REGISTRY_CLUSTER_DIR: dir,
    REGISTRY_HTTP_BASE: String(base),
    REGISTRY_SERVER_BASE: String(base + 100),
    REGISTRY_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    NODE_OPTIONS: process.env.BENCH_CLUSTER_NODE_OPTIONS ?? '',
  };
  const cmd = (...args) => execFileSync(CLUSTER, args, { env, encoding: 'utf8', timeout: 60_000, cwd: REPO }).trim();
  const http = [0, 1, 2].map((i) => `http://127.0.0.1:${base + i}`);
  const raft = [0, 1, 2].map((i) => `127.0.0.1:${base + 100 + i}`);
  const stop = () => {
    try {
      cmd('stop');
      // BENCH_KEEP_LOGS=<dir>: keep each server's log (e.g. with BENCH_LOG_LEVEL=info for snapshot lines).
      if (process.env.BENCH_KEEP_LOGS) {
        mkdirSync(process.env.BENCH_KEEP_LOGS, { recursive: true });
        for (const n of [1, 2, 3]) {
          const log = join(dir, `s${n}`, 'server.log');
          if (existsSync(log)) copyFileSync(log, join(process.env.BENCH_KEEP_LOGS, `${base}-s${n}.log`));
          // LevelDB's own log: memtable flushes, compactions and write stalls ("waiting...").
          const leveldb = join(dir, `s${n}`, 'data', 'db', 'LOG');
          if (existsSync(leveldb)) copyFileSync(leveldb, join(process.env.BENCH_KEEP_LOGS, `${base}-s${n}.leveldb.log`));
        }
      }
      cmd('clean');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const leaderUrl = () => cmd('leader').split(/\s+/)[1];
  try {
    cmd('start');
    // The leader's first no-op must commit before writes are meaningful.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const res = await fetch(`${leaderUrl()}/v1/catalog/register`, { method: 'PUT', body: '{"Node":"warm","Address":"1.1.1.1"}', signal: AbortSignal.timeout(2000) });
        if (res.ok) break;
      } catch {
        // not yet
      }
      if (Date.now() > deadline) throw new Error('registry cluster took no write within 30 s');
      await sleep(200);
    }
  } catch (err) {
    stop();
    throw err;
  }
  const pids = () => [1, 2, 3].map((n) => Number(readFileSync(join(dir, `s${n}`, 'pid'), 'utf8')));
  return {
    http,
    raft,
    leaderUrl,
    pids,
    killCmd: (signal) => `${envPrefix(env)} ${CLUSTER} ${signal} {n}`,
    restartCmd: () => `${envPrefix(env)} ${CLUSTER} restart {n}`,
    stop,
  };
}

function envPrefix(env) {
  return ['REGISTRY_CLUSTER_DIR', 'REGISTRY_HTTP_BASE', 'REGISTRY_SERVER_BASE', 'REGISTRY_LOG_LEVEL']
    .map((k) => `${k}=${env[k]}`)
    .join(' ') + (env.NODE_OPTIONS ? ` NODE_OPTIONS='${env.NODE_OPTIONS}'` : '');
}

/** The etcd members' pids, from the pid files etcd-cluster.sh keeps (its ETCD_BENCH_DIR). */
function etcdPids() {
  const dir = process.env.ETCD_BENCH_DIR ?? join(process.env.TMPDIR ?? '/tmp', 'etcd-bench');
  return [1, 2, 3].map((i) => join(dir, 'pids', `m${i}.pid`)).filter((f) => existsSync(f)).map((f) => Number(readFileSync(f, 'utf8')));
}

function etcd(...args) {
  try {
    return execFileSync(join(ETCD, 'etcd-cluster.sh'), args, { encoding: 'utf8', timeout: 60_000 }).trim();
  } catch (err) {
    // `leader` may exit non-zero after printing the answer (a pipeline's status); keep what it said.
    if (err.stdout && String(err.stdout).trim()) return String(err.stdout).trim();
    throw err;
  }
}

/**
 * wrk against a loopback URL; records and returns the parsed RESULT line, with what the measured
 * part cost the processes `pids` names (proc-cost.js: threads, context switches, CPU and run-queue
 * wait per request).
 */
function wrk(system, label, target, conns, url, pids) {
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) throw new Error(`refusing non-loopback target ${url}`);
  const threads = String(conns < 2 ? 1 : 2);
  const paced = THINK_MS > 0 ? { BENCH_PACED_SCRIPT: target, BENCH_THINK_MS: String(THINK_MS) } : {};
  const script = THINK_MS > 0 ? join(__dirname, 'paced.lua') : target;
  if (THINK_MS > 0) label = `${label}-think${THINK_MS}`;
  const env = { ...process.env, BENCH_KV_DIR: join(__dirname, '..', 'kv'), BENCH_WRK_DIR: join(ETCD, 'wrk'), LABEL: label, ...paced };
  const opts = { env, encoding: 'utf8', timeout: (DURATION + 30) * 1000 };
  execFileSync('wrk', ['-t', threads, '-c', String(conns), '-d', '2s', '--timeout', '5s', '-s', script, url], opts);
  const started = new Date().toISOString();
  const servers = pids();
  const before = sample(servers);
  const out = execFileSync('wrk', ['-t', threads, '-c', String(conns), '-d', `${DURATION}s`, '--timeout', '5s', '-s', script, url], opts);
  const after = sample(servers);
  const line = out.split('\n').find((l) => l.startsWith('RESULT'));
  if (!line) throw new Error(`wrk printed no RESULT line:\n${out}`);
  const cost = costPerRequest(before, after, parse(line).requests);
  const load = execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ')[0];
  // started= lets a run be matched with the servers' logs (BENCH_KEEP_LOGS), e.g. their snapshots.
  const costs = Object.entries(cost).map(([k, v]) => `${k}=${v}`).join(' ');
  record(`${line} system=${system} conns=${conns} load1=${load} ${costs} started=${started}`);
  return parse(`${line} ${costs}`);
}

function parse(line) {
  return Object.fromEntries(
    line.split(' ').slice(1).map((kv) => kv.split('=')).map(([k, v]) => [k, Number.isNaN(Number(v)) ? v : Number(v)]),
  );
}

function probe(system, signal, args) {
  const out = execFileSync(process.execPath, [PROBE, '--rounds', String(ROUNDS), '--settle', '3000', ...args], {
    encoding: 'utf8',
    timeout: ROUNDS * 60_000,
  });
  for (const l of out.split('\n').filter((l) => l.startsWith('ROUND'))) record(`${l} system=${system} signal=${signal}`);
  const line = out.split('\n').find((l) => l.startsWith('FAILOVER'));
  if (!line) throw new Error(`probe printed no FAILOVER line:\n${out}`);
  record(`${line} system=${system} signal=${signal}`);
  return parse(line);
}

async function registryWrites(run, results) {
  const reg = await startRegistry();
  try {
    const url = reg.leaderUrl();
    for (const c of CONNS) (results[`registry c${c}`] ??= []).push(wrk('registry', `register-c${c}-run${run}`, join(__dirname, 'register.lua'), c, url, reg.pids));
  } finally {
    reg.stop();
  }
}

function etcdWrites(run, results) {
  etcd('start');
  try {
    const url = etcd('leader').split(/\s+/)[1];
    for (const c of CONNS) (results[`etcd c${c}`] ??= []).push(wrk('etcd', `put-c${c}-run${run}`, join(ETCD, 'wrk', 'etcd-put.lua'), c, url, etcdPids));
  } finally {
    etcd('stop');
  }
}

async function registryFailover(signal, results) {
  const reg = await startRegistry();
  try {
    results[`registry ${signal}`] = probe('registry', signal, [
      '--profile', 'consul',
      '--endpoints', reg.http.join(','),
      '--raft-addrs', reg.raft.join(','),
      '--write-path', '/v1/catalog/register',
      '--write-body', '{"Node":"probe","Address":"1.2.3.4"}',
      '--kill', reg.killCmd(signal),
      '--restart', reg.restartCmd(),
    ]);
  } finally {
    reg.stop();
  }
}

function etcdFailover(signal, results) {
  etcd('start');
  try {
    results[`etcd ${signal}`] = probe('etcd', signal, [
      '--profile', 'etcd',
      '--endpoints', etcd('endpoints'),
      '--kill', `${join(ETCD, 'etcd-cluster.sh')} ${signal} {n}`,
      '--restart', `${join(ETCD, 'etcd-cluster.sh')} restart {n}`,
    ]);
  } finally {
    etcd('stop');
  }
}

const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)];
};
const fmt = (n) => Math.round(n).toLocaleString('en-US');

async function main() {
  record(`# ${new Date().toISOString()} bench/cluster runs=${RUNS} duration=${DURATION}s conns=${CONNS} rounds=${ROUNDS} load=${execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim()}`);
  const writes = {};
  if (PHASES.includes('writes')) {
    for (let run = 1; run <= RUNS; run++) {
      await registryWrites(run, writes);
      if (WITH_ETCD) etcdWrites(run, writes);
    }
  }
  const failover = {};
  if (PHASES.includes('failover')) {
    for (const signal of ['kill', 'term']) {
      await registryFailover(signal, failover);
      if (WITH_ETCD) etcdFailover(signal, failover);
    }
  }
  if (PHASES.includes('writes')) {
    console.log(`\n| c | registry register/s (range) · p50 / p99 / p999 ms | etcd put/s (range) · p50 / p99 / p999 ms | ratio |`);
    console.log('|---:|---:|---:|---:|');
    for (const c of CONNS) {
      const cell = (rs) => {
        if (!rs) return { text: '—', rps: NaN };
        const rps = rs.map((r) => r.ok_rps);
        return {
          rps: median(rps),
          text: `**${fmt(median(rps))}** (${fmt(Math.min(...rps))}–${fmt(Math.max(...rps))}) · ${median(rs.map((r) => r.p50_ms)).toFixed(1)} / ${median(rs.map((r) => r.p99_ms)).toFixed(1)} / ${median(rs.map((r) => r.p999_ms)).toFixed(1)}`,
        };
      };
      const r = cell(writes[`registry c${c}`]);
      const e = cell(writes[`etcd c${c}`]);
      console.log(`| ${c} | ${r.text} | ${e.text} | ${Number.isNaN(e.rps) ? '—' : (r.rps / e.rps).toFixed(2)} |`);
    }
    // What a write costs the three servers' processes (proc-cost.js), medians across runs.
    console.log(`\n| c | system | threads per server (max) | context switches per write | CPU µs per write | run-queue wait µs per write |`);
    console.log('|---:|---|---:|---:|---:|---:|');
    for (const c of CONNS) {
      for (const system of ['registry', 'etcd']) {
        const rs = writes[`${system} c${c}`];
        if (!rs) continue;
        const m = (k) => median(rs.map((r) => Number(r[k])));
        console.log(`| ${c} | ${system} | ${m('threads')} | ${m('csw').toFixed(2)} | ${m('cpu_us').toFixed(0)} | ${m('runq_us').toFixed(0)} |`);
      }
    }
  }
  if (PHASES.includes('failover')) {
    console.log(`\n| scenario | system | new leader ms, median (max) | write gap ms, median (max) |`);
    console.log('|---|---|---:|---:|');
    for (const [key, f] of Object.entries(failover)) {
      const [system, signal] = key.split(' ');
      console.log(`| SIG${signal.toUpperCase()} leader, ${ROUNDS} rounds | ${system} | ${f.elect_ms_median} (${f.elect_ms_max}) | ${f.gap_ms_median} (${f.gap_ms_max}) |`);
    }
  }
  console.log(`\nraw: ${RESULTS}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
