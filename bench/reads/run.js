#!/usr/bin/env node
// bench/reads (issue #14, "reads that grow with servers"): registry clusters from scripts/cluster.sh
// (real processes on 127.0.0.1), fresh for every configuration, configurations alternated so the
// machine's background load falls on each:
//   modes  — on a 3-voter cluster with 10 instances of `web`: `GET /v1/health/service/web` at
//            --conns connections against one follower in default, consistent and stale mode (and
//            default on the leader, for reference);
//   spread — reads/s of default-mode health reads with --conns connections spread evenly over all
//            servers, and register-style KV writes/s to the leader, with 3 voters vs 3 voters + 2
//            non-voters (REGISTRY_NON_VOTERS=2).
//
//   npm run build && node bench/reads/run.js [--duration 8] [--conns 64] [--runs 2] [--phases modes,spread]
//     [--cpu-per-server 0.3]   (spread: each server in its own cgroup, capped at that share of a core,
//                               so servers stop competing for this box's two cores; root, cgroup v1)
//
// Prints RESULT lines (also to --results, default /tmp/bench-reads-<time>.txt) and the load average
// before each measurement. wrk runs are bounded; only the clusters this script starts are stopped
// (cluster.sh clean, by PID); every address is on 127.0.0.1.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { appendFileSync, mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { loadavg, tmpdir } = require('node:os');
const { join } = require('node:path');
const { capCpu, cpuSeconds, freeClusterBase, sleep } = require('../support');

const REPO = join(__dirname, '..', '..');
const CLUSTER = join(REPO, 'scripts', 'cluster.sh');
const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const DURATION = Number(arg('--duration', '8'));
const CONNS = Number(arg('--conns', '64'));
const RUNS = Number(arg('--runs', '2'));
const PHASES = arg('--phases', 'modes,spread').split(',');
// Each server's CPU capped at this share of a core (spread phase), or none.
const CPU_PER_SERVER = argAt('--cpu-per-server') >= 0 ? Number(arg('--cpu-per-server')) : undefined;
const RESULTS = arg('--results', join(tmpdir(), `bench-reads-${new Date().toISOString().replace(/[:.]/g, '-')}.txt`));

const record = (line) => {
  console.log(line);
  appendFileSync(RESULTS, line + '\n');
};
const load = () => loadavg()[0].toFixed(1);

async function httpOk(url, init = {}) {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
    return res.ok ? await res.text() : null;
  } catch {
    return null;
  }
}

/** A cluster of 3 voters and `nonVoters` non-voters, with `web` registered 10 times and every server serving it. */
async function startCluster(nonVoters) {
  const n = 3 + nonVoters;
  const dir = mkdtempSync(join(tmpdir(), 'bench-reads-'));
  const base = await freeClusterBase(n);
  const env = {
    ...process.env,
    REGISTRY_CLUSTER_DIR: dir,
    REGISTRY_HTTP_BASE: String(base),
    REGISTRY_SERVER_BASE: String(base + 100),
    REGISTRY_LOG_LEVEL: 'warn',
    REGISTRY_NON_VOTERS: String(nonVoters),
  };
  const cmd = (...args) => execFileSync(CLUSTER, args, { env, encoding: 'utf8', timeout: 60_000, cwd: REPO }).trim();
  const http = [...Array(n).keys()].map((i) => `http://127.0.0.1:${base + i}`);
  const stop = () => {
    try {
      cmd('clean');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    cmd('start');
    const leader = http[Number(cmd('leader').split(/\s+/)[0]) - 1];
    for (let i = 0; i < 10; i++) {
      const body = JSON.stringify({ Node: `host-${i}`, Address: `10.0.0.${i + 1}`, Service: { ID: `web-${i}`, Service: 'web', Port: 8080 } });
      const deadline = Date.now() + 30_000;
      while (!(await httpOk(`${leader}/v1/catalog/register`, { method: 'PUT', body }))) {
        if (Date.now() > deadline) throw new Error('the cluster took no write within 30 s');
        await sleep(200);
      }
    }
    // Every server (non-voters too: they join after the voters) answers a default read with all 10.
    const deadline = Date.now() + 60_000;
    for (const url of http) {
      for (;;) {
        const body = await httpOk(`${url}/v1/health/service/web`);
        if (body && JSON.parse(body).length === 10) break;
        if (Date.now() > deadline) throw new Error(`${url} does not serve the reads within 60 s`);
        await sleep(250);
      }
    }
    const followers = http.slice(0, 3).filter((u) => u !== leader);
    const pids = http.map((_, i) => Number(readFileSync(join(dir, `s${i + 1}`, 'pid'), 'utf8')));
    return { http, leader, follower: followers[0], pids, stop };
  } catch (err) {
    stop();
    throw err;
  }
}

/** One wrk run (2 s warm-up discarded); resolves with requests/s and the non-2xx count. */
/** `measured`, if given, is called as the measured run starts and returns what to call as it ends. */
function wrk(url, conns, script, measured) {
  if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(url)) throw new Error(`refusing non-loopback target ${url}`);
  const threads = String(conns < 2 ? 1 : Math.min(2, conns));
  const extra = script ? ['-s', script] : [];
  const run = (seconds) =>
    new Promise((resolve, reject) => {
      const child = spawn('wrk', ['-t', threads, '-c', String(conns), '-d', `${seconds}s`, '--latency', '--timeout', '5s', ...extra, url], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 30) * 1000);
      child.stdout.on('data', (d) => (out += d));
      child.once('error', reject);
      child.once('exit', () => {
        clearTimeout(timer);
        const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
        const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
        const p99 = /99%\s+([\d.]+\w+)/.exec(out)?.[1];
        resolve({ rps, non2xx, p99, out });
      });
    });
  return run(2).then(async () => {
    const done = measured?.();
    const r = await run(DURATION);
    done?.();
    return r;
  });
}

async function modes(run) {
  const c = await startCluster(0);
  try {
    const path = '/v1/health/service/web';
    const cases = [
      ['follower', 'default', `${c.follower}${path}`],
      ['follower', 'consistent', `${c.follower}${path}?consistent`],
      ['follower', 'stale', `${c.follower}${path}?stale`],
      ['leader', 'default', `${c.leader}${path}`],
    ];
    // Alternate the order between runs so drift in the background load does not favour one mode.
    for (const [where, mode, url] of run % 2 === 0 ? cases : [...cases].reverse()) {
      const l = load();
      const r = await wrk(url, CONNS, undefined);
      record(`RESULT phase=modes run=${run} server=${where} mode=${mode} conns=${CONNS} reads_per_s=${Math.round(r.rps)} p99=${r.p99} non2xx=${r.non2xx} load=${l}`);
    }
  } finally {
    c.stop();
  }
}

async function spread(run, nonVoters) {
  const c = await startCluster(nonVoters);
  const cap = CPU_PER_SERVER === undefined ? '' : ` cpu_per_server=${CPU_PER_SERVER}`;
  let uncap = () => undefined;
  try {
    if (CPU_PER_SERVER !== undefined) uncap = capCpu(c.pids, CPU_PER_SERVER);
    const per = Math.max(1, Math.floor(CONNS / c.http.length));
    const l = load();
    const rs = await Promise.all(c.http.map((u) => wrk(`${u}/v1/health/service/web`, per, undefined)));
    const total = rs.reduce((n, r) => n + r.rps, 0);
    record(`RESULT phase=spread run=${run} servers=3+${nonVoters} what=reads${cap} conns=${per * c.http.length} reads_per_s=${Math.round(total)} per_server=${rs.map((r) => Math.round(r.rps)).join('/')} non2xx=${rs.reduce((n, r) => n + r.non2xx, 0)} load=${l}`);
    const lw = load();
    // CPU per 1,000 writes, leader and all servers: on this 2-core box extra servers take CPU from
    // the leader, so the cost per write says what a machine per server would see.
    let cpu = [];
    const w = await wrk(`${c.leader}/`, CONNS, join(__dirname, 'put.lua'), () => {
      const before = c.pids.map(cpuSeconds);
      return () => (cpu = c.pids.map((pid, i) => (cpuSeconds(pid) - before[i]) * 1000));
    });
    const writes = w.rps * DURATION;
    const leaderCpu = cpu[c.http.indexOf(c.leader)];
    const perK = (ms) => ((ms / writes) * 1000).toFixed(0);
    record(`RESULT phase=spread run=${run} servers=3+${nonVoters} what=writes${cap} conns=${CONNS} writes_per_s=${Math.round(w.rps)} p99=${w.p99} non2xx=${w.non2xx} leader_cpu_ms_per_1k=${perK(leaderCpu)} all_cpu_ms_per_1k=${perK(cpu.reduce((a, b) => a + b, 0))} load=${lw}`);
  } finally {
    c.stop();
    uncap();
  }
}

async function main() {
  record(`# bench/reads ${new Date().toISOString()} duration=${DURATION}s conns=${CONNS} runs=${RUNS}`);
  for (let run = 1; run <= RUNS; run++) {
    if (PHASES.includes('modes')) await modes(run);
    if (PHASES.includes('spread')) {
      // Alternate which configuration goes first.
      for (const nv of run % 2 === 1 ? [0, 2] : [2, 0]) await spread(run, nv);
    }
  }
  console.log(`results in ${RESULTS}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
