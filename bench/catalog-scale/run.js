#!/usr/bin/env node
// bench/catalog-scale (issue #14, "A large catalog"): three registry servers (scripts/cluster.sh,
// real processes on 127.0.0.1) holding N nodes, each with one service and one check — the first
// 1,000 nodes are the instances of `big`, the others app-<i mod 1000> — loaded with /v1/txn (21
// nodes = 63 ops a transaction, 8 in flight). For each N it reports, in this order:
//   rss      — VmRSS of the leader and both followers after the load and a 10 s quiet settle (no
//              forced GC: the servers run without --expose-gc), with the V8 heap in use from
//              /v1/agent/metrics beside it;
//   reads    — wrk, c=16, 10 s: GET /v1/health/service/big (min(N, 1,000) instances) on a
//              follower, ?stale and default mode: req/s, p50, p99;
//   snapshot — paced KV writes (~1,000/s, bounded by 40,000 writes and 90 s) to the leader until
//              its log says "raft: took snapshot" (snapshotThreshold 8,192 entries, the default),
//              while the bench pings GET /v1/status/leader on the leader every 10 ms: the snapshot's
//              take/persist times from the log line, the worst ping from the snapshot's start (the
//              line's time minus its take and persist times, minus 0.5 s) to the line, against the
//              worst ping elsewhere in the phase, and the leader's own event-loop delay max (the
//              metrics' 10 s windows, read every second; a reading counts only from 20 s into the
//              phase, when the last finished window it reports lies inside the phase — before, it
//              still shows the load's end);
//   writes   — wrk, c=64, 10 s: PUT /v1/catalog/register re-registering random loaded nodes
//              (register.lua: NodeMeta changes each time, so every request is a real write);
//   rss after the writes (same settle);
//   restart  — a follower SIGTERMed (cluster.sh term) and started again: seconds from the restart
//              to its first `GET /v1/health/service/big?stale` with every instance and
//              X-Registry-KnownLeader: true;
//   catch-up — a follower SIGKILLed, its data dir wiped (node-id put back) and restarted: seconds
//              to the same answer plus its metrics showing all N+ nodes (bench/large-answers'
//              catch-up, measured on this catalog's shape).
//
//   apt-get install -y wrk; npm run build && node bench/catalog-scale/run.js [--nodes 1000,10000,100000]
//       [--duration 10] [--phases rss,reads,snapshot,writes,restart,catchup] [--keep-logs DIR] [--settle-s 10]
//       [--write-bursts 1]
//   (BENCH_CLUSTER_NODE_OPTIONS is passed to the servers as NODE_OPTIONS, e.g. for a CPU profile;
//   with MEMORY_REPORT=FILE and BENCH_CLUSTER_NODE_OPTIONS="--require $PWD/bench/memory/report.js
//   --expose-gc", each server's memory report is appended to FILE after the load and after each burst.)
//
// Every loop is bounded by count and time; only the servers cluster.sh starts are stopped, and the
// cluster folder is removed at the end.
'use strict';
const { execFile } = require('node:child_process');
const { loadavg } = require('node:os');
const { join } = require('node:path');
const { readFileSync } = require('node:fs');
const { performance } = require('node:perf_hooks');
const { sleep, wipeAndRestartFollower } = require('../support');
const { call, startCluster, rssMiB, metrics, REPO } = require('./cluster');

const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const NODES = arg('--nodes', '1000,10000,100000').split(',').map(Number);
const DURATION = Number(arg('--duration', '10'));
const PHASES = arg('--phases', 'rss,reads,snapshot,writes,restart,catchup').split(',');
const KEEP_LOGS = arg('--keep-logs', '');
const WRITE_BURSTS = Number(arg('--write-bursts', '1'));
const BIG = 1000;
const NODES_PER_TXN = 21; // 3 ops each; Consul's limit is 64 ops a transaction

const load1 = () => loadavg()[0].toFixed(1);
const name = (i) => `node-${String(i).padStart(6, '0')}`;
const serviceOf = (i) => (i < BIG ? 'big' : `app-${i % 1000}`);

function txnFor(first, last) {
  const ops = [];
  for (let i = first; i < last; i++) {
    const svc = serviceOf(i);
    ops.push({ Node: { Verb: 'set', Node: { Node: name(i), Address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, Meta: { rack: `r${i % 16}` } } } });
    ops.push({ Service: { Verb: 'set', Node: name(i), Service: { ID: svc, Service: svc, Port: 8080, Tags: ['v1'] } } });
    ops.push({ Check: { Verb: 'set', Check: { Node: name(i), CheckID: `${svc}-alive`, Name: `${svc} alive`, Status: 'passing', ServiceID: svc, Output: 'HTTP GET /health: 200 OK' } } });
  }
  return JSON.stringify(ops);
}

let retries = 0;
async function load(url, n) {
  let next = 0;
  const deadline = Date.now() + 600_000;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < n) {
      if (Date.now() > deadline) throw new Error('load took over 10 minutes');
      const first = next;
      next += NODES_PER_TXN;
      const body = txnFor(first, Math.min(first + NODES_PER_TXN, n));
      // Sets only, so a retry is harmless: a busy machine can make a write miss its deadline
      // (500) or an election (a follower answers with the leader unknown); five tries, 0.5 s apart.
      for (let attempt = 1; ; attempt++) {
        const r = await call(url, 'PUT', '/v1/txn', body).catch((err) => ({ status: 0, body: err.message }));
        if (r.status === 200) break;
        if (attempt >= 5 || (r.status >= 400 && r.status < 500)) throw new Error(`txn: ${r.status} ${r.body}`);
        retries++;
        await sleep(500);
      }
    }
  }));
}

/** Runs wrk and resolves with its RESULT line's fields (bench/kv/report.lua). */
function wrk(args, env = {}) {
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { timeout: (DURATION + 60) * 1000, env: { ...process.env, BENCH_KV_DIR: join(REPO, 'bench', 'kv'), ...env } }, (err, stdout) => {
      if (err) return reject(err);
      const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
      if (!line) return reject(new Error(`no RESULT line from wrk:\n${stdout}`));
      resolve(Object.fromEntries(line.slice(7).split(' ').map((kv) => kv.split('='))));
    });
  });
}

/** Seconds left quiet before RSS is read (`--settle-s`, default 10): V8 gives back a write burst's garbage only after a while. */
const SETTLE_S = Number(arg('--settle-s', '10'));

/**
 * With MEMORY_REPORT set and bench/memory/report.js preloaded (BENCH_CLUSTER_NODE_OPTIONS), each
 * server is sent SIGUSR2 after its RSS is read: report.js appends its memory (as it stands and after
 * a full GC) to $MEMORY_REPORT, tagged here with `label` on a line of its own before it.
 */
function memoryReports(cluster, label, leader) {
  if (!process.env.MEMORY_REPORT) return;
  require('node:fs').appendFileSync(process.env.MEMORY_REPORT, JSON.stringify({ label, pids: [0, 1, 2].map((i) => cluster.pid(i)), leaderPid: cluster.pid(leader) }) + '\n');
  for (const i of [0, 1, 2]) {
    try {
      process.kill(cluster.pid(i), 'SIGUSR2');
    } catch {
      // gone
    }
  }
}

async function settledRss(cluster, leader, settleS = SETTLE_S, label = '') {
  await sleep(settleS * 1000);
  const out = [];
  for (const i of [0, 1, 2]) {
    let g = {};
    try {
      g = (await metrics(cluster.urls[i])).gauges;
    } catch {
      // no answer: heap unknown
    }
    const mib = (name) => (g[name] / 2 ** 20).toFixed(0);
    // heap = live objects; reserved = what V8 holds (live + free pages it kept); external = Buffers etc.
    out.push(`${i === leader ? 'leader' : 'follower'} ${rssMiB(cluster.pid(i)).toFixed(0)} MiB (heap ${mib('runtime.heap_used_bytes')}, reserved ${mib('runtime.heap_total_bytes')}, external ${mib('runtime.external_bytes')})`);
  }
  if (label) memoryReports(cluster, label, leader);
  return out.join(', ');
}

/** The "raft: took snapshot" lines of a server log after byte offset `from`, with their times. */
function snapshotLines(file, from) {
  const text = readFileSync(file, 'utf8').slice(from);
  return text
    .split('\n')
    .filter((l) => l.includes('took snapshot'))
    .map((l) => ({ at: Date.parse(l.slice(0, 24)), takeMs: Number(/takeMs=(\d+)/.exec(l)?.[1]), costMs: Number(/costMs=(\d+)/.exec(l)?.[1]), bytes: Number(/bytes=(\d+)/.exec(l)?.[1]) }));
}

async function snapshotPhase(cluster, leader) {
  const url = cluster.urls[leader];
  const logFrom = readFileSync(cluster.logFile(leader), 'utf8').length;
  const pings = []; // [wall ms at send, latency ms]
  let stop = false;
  let loopMax = 0;
  let loopReadings = 0;
  const phaseStart = Date.now();
  const pinger = (async () => {
    while (!stop) {
      const t0 = performance.now();
      const at = Date.now();
      try {
        await call(url, 'GET', '/v1/status/leader', undefined, 10_000);
      } catch {
        // counted as its latency
      }
      pings.push([at, performance.now() - t0]);
      await sleep(10);
    }
  })();
  const watcher = (async () => {
    while (!stop) {
      try {
        // The gauge is the last *finished* 10 s window: 20 s in, that window began inside the phase.
        const max = (await metrics(url)).gauges['runtime.event_loop_delay.max'] ?? 0;
        if (Date.now() - phaseStart >= 20_000) {
          loopMax = Math.max(loopMax, max);
          loopReadings++;
        }
      } catch {
        // no answer this time
      }
      await sleep(1000);
    }
  })();
  const started = Date.now();
  let written = 0;
  let found = [];
  // ~1,000 writes/s in groups of 10 every 10 ms; bounded by count and time.
  while (written < 40_000 && Date.now() - started < 90_000) {
    await Promise.all(Array.from({ length: 10 }, (_, k) => call(url, 'PUT', `/v1/kv/bench/snap/${(written + k) % 5000}`, String(written + k))));
    written += 10;
    if (written % 500 === 0) {
      found = snapshotLines(cluster.logFile(leader), logFrom);
      if (found.length > 0) break;
    }
    await sleep(10);
  }
  await sleep(3000); // pings after the snapshot, and the metrics window it fell in
  found = snapshotLines(cluster.logFile(leader), logFrom);
  // The loop-delay gauge shows the last finished 10 s window: wait for the window holding the snapshot to finish.
  await sleep(10_000);
  stop = true;
  await Promise.all([pinger, watcher]);
  if (found.length === 0) return `SNAPSHOT none taken after ${written} writes in ${((Date.now() - started) / 1000).toFixed(0)} s`;
  const s = found[0];
  // The persist runs in slices for costMs (wall) before the line is logged: the window is that long, plus 0.5 s.
  const from = s.at - s.costMs - s.takeMs - 500;
  const inside = pings.filter(([at]) => at >= from && at <= s.at + 200).map((p) => p[1]);
  const outside = pings.filter(([at]) => at < from || at > s.at + 200).map((p) => p[1]);
  const worst = (xs) => (xs.length ? Math.max(...xs).toFixed(1) : '-');
  return `take ${s.takeMs} ms, persist cost ${s.costMs} ms, ${(s.bytes / 2 ** 20).toFixed(1)} MiB, after ${written} writes; worst 10 ms ping near it ${worst(inside)} ms (${inside.length} pings) vs elsewhere ${worst(outside)} ms (${outside.length}); leader loop-delay max ${loopReadings ? loopMax.toFixed(1) : '-'} ms (${loopReadings} readings from 20 s in)`;
}

/** Polls a server until /v1/health/service/big?stale holds every instance with a known leader (and, if `nodes`, its metrics show that many nodes). */
async function untilServing(cluster, i, expect, nodes, started) {
  let sawBehindWithLeader = false;
  while (Date.now() - started < 300_000) {
    // A server that exited (a crash on start) will not answer: say so at once, with its last words.
    let alive = false;
    try {
      process.kill(cluster.pid(i), 0);
      alive = true;
    } catch {
      // gone, or not started yet (no pid file)
    }
    if (!alive && Date.now() - started > 2000) {
      const tail = readFileSync(cluster.logFile(i), 'utf8').trim().split('\n').slice(-1)[0];
      return { seconds: Infinity, sawBehindWithLeader, exited: tail };
    }
    try {
      if (nodes) {
        const m = await metrics(cluster.urls[i]);
        if ((m.gauges['state.nodes'] ?? 0) < nodes) {
          await sleep(20);
          continue;
        }
      }
      const r = await call(cluster.urls[i], 'GET', '/v1/health/service/big?stale', undefined, 60_000);
      if (r.status === 200) {
        const count = JSON.parse(r.body.toString()).length;
        const known = r.headers['x-registry-knownleader'] === 'true';
        if (known && count >= expect) return { seconds: (Date.now() - started) / 1000, sawBehindWithLeader };
        if (known && count < expect) sawBehindWithLeader = true;
      }
    } catch {
      // not listening yet
    }
    await sleep(20);
  }
  return { seconds: Infinity, sawBehindWithLeader };
}

/**
 * Where a restart's time went, from the server's own log (its lines start with ISO times): seconds
 * from the restart to "registry agent running" (process start, Raft state opened, HTTP listening),
 * "raft: installed snapshot" (a wiped follower), "cluster leader known" and "caught up with the leader".
 */
function logSteps(file, started) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const from = lines.findLastIndex((l) => l.includes('cluster.sh: starting'));
  const at = (needle) => {
    const line = lines.slice(from).find((l) => l.includes(needle));
    const t = line && Date.parse(line.slice(0, 24));
    return t ? ((t - started) / 1000).toFixed(2) : '-';
  };
  return `running ${at('registry agent running')} s, snapshot-installed ${at('installed snapshot')} s, leader-known ${at('cluster leader known')} s, caught-up ${at('caught up with the leader')} s`;
}

async function restart(cluster, n) {
  const leader = cluster.leader();
  const victim = [0, 1, 2].find((i) => i !== leader);
  const t0 = Date.now();
  cluster.cmd('term', String(victim + 1));
  const termS = (Date.now() - t0) / 1000;
  const started = Date.now();
  cluster.cmd('restart', String(victim + 1));
  const r = await untilServing(cluster, victim, Math.min(n, BIG), 0, started);
  if (r.exited) return `did not serve: the server exited (${r.exited})`;
  return `${r.seconds.toFixed(2)} s (${logSteps(cluster.logFile(victim), started)}; SIGTERM to exit ${termS.toFixed(2)} s) known-leader-while-behind=${r.sawBehindWithLeader}`;
}

async function catchUp(cluster, n) {
  const { victim, started } = wipeAndRestartFollower(cluster);
  const r = await untilServing(cluster, victim, Math.min(n, BIG), n, started);
  if (r.exited) return `did not serve: the server exited (${r.exited})`;
  return `${r.seconds.toFixed(2)} s (${logSteps(cluster.logFile(victim), started)}) known-leader-while-behind=${r.sawBehindWithLeader}`;
}

(async () => {
  const lines = [];
  const record = (line) => {
    console.log(line);
    lines.push(line);
  };
  record(`# ${new Date().toISOString()} bench/catalog-scale nodes=${NODES.join(',')} duration=${DURATION}`);
  for (const n of NODES) {
    const cluster = await startCluster({ keepLogs: KEEP_LOGS });
    // Interrupted: stop this cluster's servers (by their pids, through cluster.sh) before leaving.
    const interrupted = () => {
      cluster.stop();
      process.exit(130);
    };
    process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
    try {
      const t0 = Date.now();
      await load(cluster.urls[cluster.leader()], n);
      record(`LOADED nodes=${n} in ${((Date.now() - t0) / 1000).toFixed(1)} s (${retries} transactions retried) load=${load1()}`);
      const leader = cluster.leader();
      const follower = [0, 1, 2].find((i) => i !== leader);
      if (PHASES.includes('rss')) record(`RSS nodes=${n} after load: ${await settledRss(cluster, leader, SETTLE_S, 'after-load')} load=${load1()}`);
      if (PHASES.includes('reads')) {
        for (const mode of ['stale', 'default']) {
          const q = mode === 'stale' ? '?stale' : '';
          const r = await wrk(['-t2', '-c16', `-d${DURATION}s`, '-s', join(__dirname, 'get.lua'), `${cluster.urls[follower]}/v1/health/service/big${q}`], { LABEL: `health-${mode}` });
          record(`READS nodes=${n} health/service/big (${Math.min(n, BIG)} instances) ${mode} on a follower c=16: ${r.ok_rps}/s p50 ${r.p50_ms} ms p99 ${r.p99_ms} ms max ${r.max_ms} ms non2xx ${r.non2xx} errors ${r.sock_err} load=${load1()}`);
        }
      }
      if (PHASES.includes('snapshot')) record(`SNAPSHOT nodes=${n} leader: ${await snapshotPhase(cluster, leader)} load=${load1()}`);
      // `--write-bursts K` (default 1): the writes phase K times in a row, each with its RSS
      // readings — whether a second burst grows memory again or reuses what the first left.
      for (let burst = 1; PHASES.includes('writes') && burst <= WRITE_BURSTS; burst++) {
        const tag = WRITE_BURSTS > 1 ? ` (burst ${burst})` : '';
        const r = await wrk(['-t2', '-c64', `-d${DURATION}s`, '-s', join(__dirname, 'register.lua'), cluster.urls[leader]], { LABEL: 'register', BENCH_NODES: String(n) });
        record(`WRITES nodes=${n}${tag} register c=64 to the leader: ${r.ok_rps}/s p50 ${r.p50_ms} ms p99 ${r.p99_ms} ms max ${r.max_ms} ms non2xx ${r.non2xx} errors ${r.sock_err} load=${load1()}`);
        if (PHASES.includes('rss')) {
          // At once (what the burst left resident) and after the settle (what is given back).
          record(`RSS nodes=${n}${tag} right after writes: ${await settledRss(cluster, leader, 0)} load=${load1()}`);
          record(`RSS nodes=${n}${tag} after writes: ${await settledRss(cluster, leader, SETTLE_S, `after-writes${tag}`)} load=${load1()}`);
        }
      }
      if (PHASES.includes('restart')) record(`RESTART nodes=${n} follower SIGTERM+start → serving: ${await restart(cluster, n)} load=${load1()}`);
      if (PHASES.includes('catchup')) record(`CATCHUP nodes=${n} wiped follower (same id) → serving: ${await catchUp(cluster, n)} load=${load1()}`);
    } finally {
      process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
      cluster.stop();
    }
  }
  call.close();
  console.log(lines.join('\n'));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
