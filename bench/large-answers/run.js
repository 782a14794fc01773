#!/usr/bin/env node
// bench/large-answers (issue #16): three registry servers (scripts/cluster.sh, real processes on
// 127.0.0.1) holding N nodes, then
//   writes    — PUT /v1/catalog/register (node + one service, 10,000-node space, like
//               bench/cluster/register.lua) at 16 connections to the leader, alone, then beside one
//               reader looping GET /v1/catalog/nodes on the leader; writes/s of both runs, the
//               reader's answers/s, and the longest write latency (an event-loop stall shows there);
//   catch-up  — a follower SIGKILLed, its data dir wiped (its node-id put back: same server, same
//               id) and restarted: time from the restart to its first `?stale` answer with
//               X-Registry-KnownLeader: true that holds all N loaded nodes.
//
//   npm run build && node bench/large-answers/run.js [--nodes 1000,10000,100000] [--duration 10]
//       [--phases writes,catchup]
//       (BENCH_CLUSTER_NODE_OPTIONS is passed to the servers as NODE_OPTIONS, e.g. for a CPU profile)
//
// Every request goes to 127.0.0.1; only the processes scripts/cluster.sh starts (by PID) are
// stopped, and the cluster folder is removed at the end. Closed-loop clients, one request in flight
// per connection, with Node's http (keep-alive).
'use strict';
const { execFileSync } = require('node:child_process');
const http = require('node:http');
const { mkdtempSync, readFileSync, rmSync, mkdirSync, writeFileSync } = require('node:fs');
const { tmpdir, loadavg } = require('node:os');
const { join } = require('node:path');
const { freePort, sleep } = require('../support');

const REPO = join(__dirname, '..', '..');
const CLUSTER = join(REPO, 'scripts', 'cluster.sh');
const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const NODES = arg('--nodes', '1000,10000,100000').split(',').map(Number);
const DURATION = Number(arg('--duration', '10'));
const PHASES = arg('--phases', 'writes,catchup').split(',');

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function call(base, method, path, body, timeoutMs = 30_000) {
  const url = new URL(path, base);
  if (url.hostname !== '127.0.0.1') throw new Error(`refusing non-loopback target ${base}`);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function freeBase() {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 20000);
    const free = await Promise.all([0, 1, 2, 100, 101, 102].map(async (d) => {
      try {
        const srv = require('node:net').createServer();
        await new Promise((res, rej) => srv.once('error', rej).listen(base + d, '127.0.0.1', res));
        await new Promise((res) => srv.close(res));
        return true;
      } catch {
        return false;
      }
    }));
    if (free.every(Boolean)) return base;
  }
  void freePort;
  throw new Error('no free ports found');
}

async function startCluster() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-large-'));
  const base = await freeBase();
  const env = { ...process.env, REGISTRY_CLUSTER_DIR: dir, REGISTRY_HTTP_BASE: String(base), REGISTRY_SERVER_BASE: String(base + 100), REGISTRY_LOG_LEVEL: 'info', NODE_OPTIONS: process.env.BENCH_CLUSTER_NODE_OPTIONS ?? '' };
  const cmd = (...args) => execFileSync(CLUSTER, args, { env, encoding: 'utf8', timeout: 60_000, cwd: REPO }).trim();
  const urls = [0, 1, 2].map((i) => `http://127.0.0.1:${base + i}`);
  const stop = () => {
    try {
      cmd('clean');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  cmd('start');
  const leader = () => Number(cmd('leader').split(/\s+/)[0]) - 1;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await call(urls[leader()], 'PUT', '/v1/catalog/register', '{"Node":"warm","Address":"1.1.1.1"}', 2000);
      if (r.status === 200) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      stop();
      throw new Error('no write within 30 s');
    }
    await sleep(200);
  }
  return { dir, urls, cmd, leader, stop };
}

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

function registerBody() {
  const n = Math.floor(Math.random() * 10000);
  return JSON.stringify({ Node: `bench-${String(n).padStart(4, '0')}`, Address: `10.1.${n >> 8}.${n & 255}`, Service: { Service: 'bench', Port: 8080, Tags: ['v1'] } });
}

/** 16 writers (and optionally one reader of the whole catalog) for DURATION seconds. */
async function writes(url, withReader) {
  const until = Date.now() + DURATION * 1000;
  let done = 0;
  let failed = 0;
  let worst = 0;
  let reads = 0;
  let readMs = 0;
  const writer = async () => {
    while (Date.now() < until) {
      const t0 = Date.now();
      try {
        const r = await call(url, 'PUT', '/v1/catalog/register', registerBody(), 10_000);
        if (r.status === 200) done++;
        else failed++;
      } catch {
        failed++;
      }
      worst = Math.max(worst, Date.now() - t0);
    }
  };
  const reader = async () => {
    while (Date.now() < until) {
      const t0 = Date.now();
      const r = await call(url, 'GET', '/v1/catalog/nodes', undefined, 60_000);
      if (r.status === 200) {
        reads++;
        readMs += Date.now() - t0;
      }
    }
  };
  await Promise.all([...Array.from({ length: 16 }, writer), ...(withReader ? [reader()] : [])]);
  return { writesPerS: done / DURATION, failed, worstWriteMs: worst, readsPerS: reads / DURATION, meanReadMs: reads ? readMs / reads : 0 };
}

async function catchUp(cluster, n) {
  const leader = cluster.leader();
  const victim = [0, 1, 2].find((i) => i !== leader);
  const dataDir = join(cluster.dir, `s${victim + 1}`, 'data');
  const nodeId = readFileSync(join(dataDir, 'node-id'), 'utf8');
  cluster.cmd('kill', String(victim + 1));
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, 'node-id'), nodeId);
  const started = Date.now();
  cluster.cmd('restart', String(victim + 1));
  let sawBehindWithLeader = false;
  while (Date.now() - started < 300_000) {
    try {
      const r = await call(cluster.urls[victim], 'GET', '/v1/catalog/nodes?stale', undefined, 60_000);
      if (r.status === 200) {
        const count = (r.body.toString().match(/"Node":"load-/g) || []).length;
        const known = r.headers['x-registry-knownleader'] === 'true';
        if (known && count >= n) return { seconds: (Date.now() - started) / 1000, sawBehindWithLeader };
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
        const url = cluster.urls[cluster.leader()];
        const alone = await writes(url, false);
        const beside = await writes(url, true);
        record(`WRITES nodes=${n} alone=${alone.writesPerS.toFixed(0)}/s (worst ${alone.worstWriteMs} ms) with-reader=${beside.writesPerS.toFixed(0)}/s (worst ${beside.worstWriteMs} ms) ratio=${(beside.writesPerS / alone.writesPerS * 100).toFixed(0)}% reads=${beside.readsPerS.toFixed(1)}/s mean-read=${beside.meanReadMs.toFixed(0)} ms load=${loadavg()[0].toFixed(1)}`);
      }
      if (PHASES.includes('catchup')) {
        const c = await catchUp(cluster, n);
        record(`CATCHUP nodes=${n} same-id=${c.seconds.toFixed(2)} s known-leader-while-behind=${c.sawBehindWithLeader} load=${loadavg()[0].toFixed(1)}`);
      }
    } finally {
      cluster.stop();
    }
  }
  agent.destroy();
  console.log(lines.join('\n'));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
