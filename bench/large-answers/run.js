#!/usr/bin/env node
// bench/large-answers (issue #16): three registry servers (scripts/cluster.sh, real processes on
// 127.0.0.1) holding N nodes, then
//   writes    — PUT /v1/catalog/register (node + one service, 10,000-node space, like
//               bench/cluster/register.lua, but each write changes its node's Meta) at 16
//               connections to the leader, alone, then beside one reader looping GET
//               /v1/catalog/nodes on the leader; writes/s of both runs, the reader's answers/s, the
//               longest write latency (an event-loop stall shows there) and the CPU share of the
//               leader, the writers and the reader (each side its own process: client.js);
//               --rounds R repeats the alone/beside pair R times on the same cluster;
//   catch-up  — a follower SIGKILLed, its data dir wiped (its node-id put back: same server, same
//               id) and restarted: time from the restart to its first `?stale` answer with
//               X-Registry-KnownLeader: true that holds all N loaded nodes, and from its log the
//               steps on the way (Raft state opened, leader known, caught up).
//
//   npm run build && node bench/large-answers/run.js [--nodes 1000,10000,100000] [--duration 10]
//       [--phases writes,catchup] [--rounds 1] [--keep-logs DIR]
//       (BENCH_CLUSTER_NODE_OPTIONS is passed to the servers as NODE_OPTIONS, e.g. for a CPU profile;
//       REGISTRY_LARGE_ANSWER_DUTY, e.g. 1, changes the share large answers get: http/sliced-json.ts;
//       REGISTRY_CLUSTER_BIN runs another build, e.g. a copy of the code before a change)
//   The build times of large health and KV answers: bench/large-answers/builders.js.
//
// Every request goes to 127.0.0.1; only the processes scripts/cluster.sh starts (by PID) are
// stopped, and the cluster folder is removed at the end. Closed-loop clients, one request in flight
// per connection, with Node's http (keep-alive).
'use strict';
const { execFile } = require('node:child_process');
const { readFileSync } = require('node:fs');
const { loadavg } = require('node:os');
const { join } = require('node:path');
const support = require('../support');
const { loopbackCaller, sleep, wipeAndRestartFollower } = support;

const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const NODES = arg('--nodes', '1000,10000,100000').split(',').map(Number);
const DURATION = Number(arg('--duration', '10'));
const PHASES = arg('--phases', 'writes,catchup').split(',');
const ROUNDS = Number(arg('--rounds', '1'));
const KEEP_LOGS = arg('--keep-logs', '');

const call = loopbackCaller({ maxSockets: 64, timeoutMs: 30_000 });

const startCluster = () =>
  support.startCluster({ call, prefix: 'bench-large-', warm: { path: '/v1/catalog/register', body: '{"Node":"warm","Address":"1.1.1.1"}' }, keepLogs: KEEP_LOGS });

async function load(url, n) {
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < n) {
      const first = next;
      next += 64;
      const ops = [];
      for (let i = first; i < Math.min(first + 64, n); i++) {
        ops.push({ Node: { Verb: 'set', Node: { Node: `load-${String(i).padStart(6, '0')}`, Address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, Meta: { rack: `r${i % 16}` } } } });
      }
      const r = await call(url, 'PUT', '/v1/txn', JSON.stringify(ops));
      if (r.status !== 200) throw new Error(`txn: ${r.status} ${r.body}`);
    }
  }));
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (100/s on Linux)
  } catch {
    return NaN;
  }
}

/** Runs client.js in its own process and resolves with the JSON line it prints. */
function client(args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(__dirname, 'client.js'), ...args], { timeout: (DURATION + 120) * 1000 }, (err, stdout) => {
      if (err) reject(err);
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

/**
 * 16 writers (and optionally one reader of the whole catalog) for DURATION seconds, each side in
 * its own process (client.js), and the leader's CPU use meanwhile.
 */
async function writes(cluster, withReader) {
  const n = cluster.leader();
  const url = cluster.urls[n];
  const pid = cluster.pid(n);
  const cpu0 = cpuSeconds(pid);
  const t0 = Date.now();
  const [w, r] = await Promise.all([client(['writers', url, String(DURATION), '16']), withReader ? client(['reader', url, String(DURATION)]) : null]);
  const leaderCpu = (cpuSeconds(pid) - cpu0) / ((Date.now() - t0) / 1000);
  return {
    writesPerS: w.done / DURATION,
    failed: w.failed,
    worstWriteMs: w.worstMs,
    writersCpu: w.cpuMs / 1000 / DURATION,
    readsPerS: r ? r.done / DURATION : 0,
    meanReadMs: r && r.done ? r.totalMs / r.done : 0,
    readerCpu: r ? r.cpuMs / 1000 / DURATION : 0,
    leaderCpu,
  };
}

/**
 * Where the catch-up time went, from the restarted server's own log (its lines carry ISO times):
 * seconds from the restart to its Raft state being opened (process start: loading modules,
 * compiling schemas, opening LevelDB), to a known leader, and to "caught up" (the read-index
 * barrier of node/catch-up.ts passed: everything committed before it asked is applied).
 */
function catchUpSteps(logFile, started) {
  const lines = readFileSync(logFile, 'utf8').split('\n');
  const restart = lines.findLastIndex((l) => l.includes('cluster.sh: starting'));
  const at = (needle) => {
    const line = lines.slice(restart).find((l) => l.includes(needle));
    const t = line && Date.parse(line.slice(0, 24));
    return t ? ((t - started) / 1000).toFixed(2) : '?';
  };
  return `raft-open ${at('no Raft state on disk')} s, leader-known ${at('cluster leader known')} s, caught-up ${at('caught up with the leader')} s`;
}

async function catchUp(cluster, n) {
  const { victim, started } = wipeAndRestartFollower(cluster);
  let sawBehindWithLeader = false;
  while (Date.now() - started < 300_000) {
    try {
      const r = await call(cluster.urls[victim], 'GET', '/v1/catalog/nodes?stale', undefined, 60_000);
      if (r.status === 200) {
        const count = (r.body.toString().match(/"Node":"load-/g) || []).length;
        const known = r.headers['x-registry-knownleader'] === 'true';
        if (known && count >= n) return { seconds: (Date.now() - started) / 1000, sawBehindWithLeader, steps: catchUpSteps(cluster.logFile(victim), started) };
        if (known && count < n) sawBehindWithLeader = true;
      }
    } catch {
      // not listening yet
    }
    await sleep(20);
  }
  return { seconds: Infinity, sawBehindWithLeader };
}

(async () => {
  const lines = [];
  const record = (line) => {
    console.log(line);
    lines.push(line);
  };
  for (const n of NODES) {
    const cluster = await startCluster();
    try {
      const t0 = Date.now();
      await load(cluster.urls[cluster.leader()], n);
      record(`LOADED nodes=${n} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      if (PHASES.includes('writes')) {
        // 5 s of writes first: the first writes of a run insert nodes (and may
        // meet the first Raft snapshot of the loaded state), which made the first round differ.
        await client(['writers', cluster.urls[cluster.leader()], '5', '16']);
        let sumAlone = 0;
        let sumBeside = 0;
        for (let round = 0; round < ROUNDS; round++) {
          const alone = await writes(cluster, false);
          const loadAlone = loadavg()[0];
          const beside = await writes(cluster, true);
          const cpu = (x) => `${(x * 100).toFixed(0)}%`;
          record(
            `WRITES nodes=${n} alone=${alone.writesPerS.toFixed(0)}/s (worst ${alone.worstWriteMs} ms, leader cpu ${cpu(alone.leaderCpu)}, writers cpu ${cpu(alone.writersCpu)}, load ${loadAlone.toFixed(1)})` +
              ` with-reader=${beside.writesPerS.toFixed(0)}/s (worst ${beside.worstWriteMs} ms, leader cpu ${cpu(beside.leaderCpu)}, writers cpu ${cpu(beside.writersCpu)}, reader cpu ${cpu(beside.readerCpu)})` +
              ` ratio=${((beside.writesPerS / alone.writesPerS) * 100).toFixed(0)}% reads=${beside.readsPerS.toFixed(1)}/s mean-read=${beside.meanReadMs.toFixed(0)} ms load=${loadavg()[0].toFixed(1)}`,
          );
          sumAlone += alone.writesPerS;
          sumBeside += beside.writesPerS;
        }
        // The machine's load moves the rate alone by 2× between windows: the pairs' sums compare better.
        if (ROUNDS > 1) record(`WRITES-ALL nodes=${n} rounds=${ROUNDS} writes beside the reader / alone = ${((sumBeside / sumAlone) * 100).toFixed(0)}%`);
      }
      if (PHASES.includes('catchup')) {
        const c = await catchUp(cluster, n);
        record(`CATCHUP nodes=${n} same-id=${c.seconds.toFixed(2)} s (${c.steps ?? 'not caught up'}, then served) known-leader-while-behind=${c.sawBehindWithLeader} load=${loadavg()[0].toFixed(1)}`);
      }
    } finally {
      cluster.stop();
    }
  }
  call.close();
  console.log(lines.join('\n'));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
