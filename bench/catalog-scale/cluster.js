// The pieces bench/catalog-scale/run.js drives a three-server cluster with: scripts/cluster.sh on
// free ports in a temp folder, a loopback-only HTTP call, the servers' pids, RSS and logs, and the
// agent's JSON metrics. Only processes cluster.sh started (by their recorded pid) are ever signalled.
'use strict';
const { execFileSync } = require('node:child_process');
const http = require('node:http');
const net = require('node:net');
const { cpSync, mkdtempSync, readFileSync, rmSync, mkdirSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { sleep } = require('../support');

const REPO = join(__dirname, '..', '..');
const CLUSTER = join(REPO, 'scripts', 'cluster.sh');

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request to 127.0.0.1; resolves with status, headers and the body as a Buffer. */
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

const portFree = (port) =>
  new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });

/** A base port B with B..B+2 (HTTP) and B+100..B+102 (server RPC) free. */
async function freeBase() {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 20000);
    const free = await Promise.all([0, 1, 2, 100, 101, 102].map((d) => portFree(base + d)));
    if (free.every(Boolean)) return base;
  }
  throw new Error('no free ports found');
}

/** VmRSS of a pid in MiB (NaN once it is gone). */
function rssMiB(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return NaN;
  }
}

/** The agent's JSON metrics, as { gauges: name-suffix → value (first of its name), samples: name-suffix → sample }. */
async function metrics(base) {
  const r = await call(base, 'GET', '/v1/agent/metrics', undefined, 10_000);
  if (r.status !== 200) throw new Error(`metrics: ${r.status}`);
  const m = JSON.parse(r.body.toString());
  // Gauge names carry the hostname after `registry.` unless disabled: keep the part after it.
  const key = (name) => name.replace(/^registry\.(?:[^.]+\.)?(?=(runtime|raft|state|rpc|server)\.)/, '');
  const gauges = {};
  for (const g of m.Gauges) {
    const k = key(g.Name) + (g.Labels && g.Labels.stat ? `.${g.Labels.stat}` : '');
    if (!(k in gauges)) gauges[k] = g.Value;
  }
  const samples = {};
  for (const s of m.Samples) samples[key(s.Name)] = s;
  return { timestamp: m.Timestamp, gauges, samples };
}

async function startCluster({ keepLogs } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-catalog-scale-'));
  const base = await freeBase();
  const env = { ...process.env, REGISTRY_CLUSTER_DIR: dir, REGISTRY_HTTP_BASE: String(base), REGISTRY_SERVER_BASE: String(base + 100), REGISTRY_LOG_LEVEL: 'info', NODE_OPTIONS: process.env.BENCH_CLUSTER_NODE_OPTIONS ?? '' };
  const cmd = (...args) => execFileSync(CLUSTER, args, { env, encoding: 'utf8', timeout: 60_000, cwd: REPO }).trim();
  const urls = [0, 1, 2].map((i) => `http://127.0.0.1:${base + i}`);
  const pid = (i) => Number(readFileSync(join(dir, `s${i + 1}`, 'pid'), 'utf8'));
  const logFile = (i) => join(dir, `s${i + 1}`, 'server.log');
  const stop = () => {
    try {
      if (keepLogs) {
        mkdirSync(keepLogs, { recursive: true });
        for (const i of [1, 2, 3]) cpSync(join(dir, `s${i}`, 'server.log'), join(keepLogs, `s${i}-${Date.now()}.log`));
      }
      cmd('clean');
    } catch (err) {
      // cluster.sh could not stop them: the recorded pids, if still our servers (their command
      // line names this cluster's data dir), get a SIGKILL.
      console.error(`cluster.sh clean failed (${err.message.split('\n')[0]}); killing the servers by pid`);
      for (const i of [0, 1, 2]) {
        try {
          const p = pid(i);
          if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(join(dir, `s${i + 1}`, 'data'))) process.kill(p, 'SIGKILL');
        } catch {
          // not running
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  cmd('start');
  const leader = () => Number(cmd('leader').split(/\s+/)[0]) - 1;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await call(urls[leader()], 'PUT', '/v1/kv/bench-warm', 'x', 2000);
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
  return { dir, urls, cmd, leader, pid, logFile, stop };
}

module.exports = { call, agent, startCluster, rssMiB, metrics, REPO };
