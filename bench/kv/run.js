#!/usr/bin/env node
// bench/kv: KV puts/s and CAS/s on three registry servers, side by side with etcd 3.4 puts (Debian's
// etcd-server, the peer scripts in ../shared/peers/etcd) on the same machine, and prepared-query
// executes/s over a 100-instance service. One load tool for both systems: wrk, closed loop, one
// request in flight per connection, aimed at the leader.
//
//   apt-get install -y etcd-server etcd-client wrk   (once)
//   npx tsc -b packages/cli && node bench/kv/run.js [--duration 10] [--conns 1,16,64,256] [--no-etcd]
//
// Prints RESULT lines as it goes and a markdown table at the end. Every phase is bounded in time;
// the servers it starts (registry and etcd) are stopped by PID at the end, and all traffic is on
// 127.0.0.1.
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const { mkdtempSync, rmSync, existsSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { freePort, sleep } = require('../support');

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'packages/cli/bin/registry.js');
const ETCD = join(REPO, '..', 'shared', 'peers', 'etcd');
const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const DURATION = Number(arg('--duration', '10'));
const CONNS = arg('--conns', '1,16,64,256').split(',').map(Number);
const WITH_ETCD = argAt('--no-etcd') < 0;
const INSTANCES = 100;


async function call(base, method, path, body) {
  const res = await fetch(base + path, { method, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** wrk against a loopback URL; returns the parsed RESULT line. */
function wrk(label, script, conns, url, seconds, env = {}) {
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) throw new Error(`refusing non-loopback target ${url}`);
  const threads = String(conns < 2 ? 1 : 2);
  const opts = { env: { ...process.env, BENCH_KV_DIR: __dirname, BENCH_WRK_DIR: join(ETCD, 'wrk'), LABEL: label, ...env }, encoding: 'utf8', timeout: (seconds + 30) * 1000 };
  // Warm-up, discarded.
  execFileSync('wrk', ['-t', threads, '-c', String(conns), '-d', '2s', '--timeout', '5s', '-s', script, url], opts);
  const out = execFileSync('wrk', ['-t', threads, '-c', String(conns), '-d', `${seconds}s`, '--timeout', '5s', '-s', script, url], opts);
  const line = out.split('\n').find((l) => l.startsWith('RESULT'));
  if (!line) throw new Error(`wrk printed no RESULT line:\n${out}`);
  console.log(`${line} conns=${conns}`);
  return Object.fromEntries(line.split(' ').slice(1).map((kv) => kv.split('=')).map(([k, v]) => [k, Number.isNaN(Number(v)) ? v : Number(v)]));
}

async function startRegistry() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-kv-'));
  const servers = [];
  for (let i = 0; i < 3; i++) servers.push({ i, httpPort: await freePort(), serverPort: await freePort() });
  for (const s of servers) {
    const args = [CLI, 'agent', '-server', '-node', `s${s.i}`, '-data-dir', join(dir, `s${s.i}`), '-bind', '127.0.0.1', '-client', '127.0.0.1',
      '-http-port', String(s.httpPort), '-server-port', String(s.serverPort), '-bootstrap-expect', '3', '-log-level', 'warn',
      ...servers.filter((o) => o !== s).flatMap((o) => ['-retry-join', `127.0.0.1:${o.serverPort}`])];
    s.child = spawn(process.execPath, [...(process.env.BENCH_KV_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_KV_PROFILE] : []), ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const stop = async () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGTERM');
    // Let them exit on their own (a profiled server writes its profile on exit), bounded.
    for (let waited = 0; waited < 10_000 && servers.some((s) => s.child.exitCode === null && s.child.signalCode === null); waited += 200) await sleep(200);
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const leader = await call(`http://127.0.0.1:${servers[0].httpPort}`, 'GET', '/v1/status/leader');
      const s = leader && servers.find((x) => leader.endsWith(`:${x.serverPort}`));
      if (s) {
        const url = `http://127.0.0.1:${s.httpPort}`;
        await call(url, 'PUT', '/v1/kv/bench/ready', 'x');
        return { url, stop };
      }
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error('registry cluster had no leader within 30 s');
    }
    await sleep(200);
  }
}

async function seedQuery(url) {
  for (let i = 0; i < INSTANCES; i++) {
    await call(url, 'PUT', '/v1/catalog/register', {
      Node: `bench-node-${i}`,
      Address: `10.10.${i >> 8}.${i & 255}`,
      Service: { Service: 'bench-svc', Port: 8000, Tags: ['v1'] },
      Check: { CheckID: 'svc', Name: 'svc', Status: 'passing', ServiceID: 'bench-svc' },
    });
  }
  await call(url, 'POST', '/v1/query', { Name: 'bench-query', Service: { Service: 'bench-svc', OnlyPassing: true } });
  const r = await call(url, 'GET', '/v1/query/bench-query/execute');
  if (r.Nodes.length !== INSTANCES) throw new Error(`query answers ${r.Nodes.length} instances, expected ${INSTANCES}`);
}

function etcd(cmd, ...args) {
  try {
    return execFileSync(join(ETCD, cmd), args, { encoding: 'utf8', timeout: 60_000 }).trim();
  } catch (err) {
    // `leader` may exit non-zero after printing the answer (a pipeline's status); keep what it said.
    if (err.stdout && String(err.stdout).trim()) return String(err.stdout).trim();
    throw err;
  }
}

async function main() {
  const results = { registry: {}, etcd: {} };
  const reg = await startRegistry();
  try {
    for (const c of CONNS) results.registry[`put-c${c}`] = wrk(`registry-put-c${c}`, join(__dirname, 'kv-put.lua'), c, reg.url, DURATION);
    results.registry['cas-c64'] = wrk('registry-cas-c64', join(__dirname, 'kv-cas.lua'), 64, reg.url, DURATION);
    await seedQuery(reg.url);
    for (const c of [16, 64]) results.registry[`query-c${c}`] = wrk(`registry-query-c${c}`, join(__dirname, 'query-execute.lua'), c, reg.url, DURATION);
  } finally {
    await reg.stop();
  }
  if (WITH_ETCD && existsSync(join(ETCD, 'etcd-cluster.sh'))) {
    etcd('etcd-cluster.sh', 'start');
    try {
      const leader = etcd('etcd-cluster.sh', 'leader').split(/\s+/)[1];
      for (const c of CONNS) results.etcd[`put-c${c}`] = wrk(`etcd-put-c${c}`, join(ETCD, 'wrk', 'etcd-put.lua'), c, leader, DURATION);
    } finally {
      etcd('etcd-cluster.sh', 'stop');
    }
  }
  const rps = (r) => (r ? r.ok_rps : NaN);
  console.log('\n| load | registry ok/s (p99 ms) | etcd ok/s (p99 ms) | registry / etcd |');
  console.log('|---|---|---|---|');
  for (const c of CONNS) {
    const r = results.registry[`put-c${c}`];
    const e = results.etcd[`put-c${c}`];
    console.log(`| put, ${c} conns | ${rps(r)} (${r.p99_ms}) | ${e ? `${rps(e)} (${e.p99_ms})` : '—'} | ${e ? (rps(r) / rps(e)).toFixed(2) : '—'} |`);
  }
  const cas = results.registry['cas-c64'];
  console.log(`| CAS (cas=0 create), 64 conns | ${rps(cas)} (${cas.p99_ms}) | — | — |`);
  for (const c of [16, 64]) {
    const q = results.registry[`query-c${c}`];
    console.log(`| query execute, ${INSTANCES} instances, ${c} conns | ${rps(q)} (${q.p99_ms}) | — | — |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
