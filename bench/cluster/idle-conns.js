#!/usr/bin/env node
// bench/cluster/idle-conns.js (issue 33): idle connections to a server port must cost a server at
// most its configured share of descriptors, never its place in Raft.
//
// Part 1 — 21,000 idle connections to one follower's server port of a three-server cluster
// (scripts/cluster.sh: each server at the hard RLIMIT_NOFILE, 20,000 on this box), kept open for
// --seconds by --procs holder processes from their own 127.0.0.x addresses (a process cannot hold
// 21,000 descriptors here, and one address would only meet the per-client cap): a connection the
// server closes is opened again, so ~21,000 stay pending against it all along. Meanwhile the leader
// takes one write every 100 ms. Budgets: the follower applies every write (its applied index
// reaches the leader's commit index, each within 2 s), answers HTTP throughout, keeps its term and
// leader, and holds at most limits.rpc_max_conns of the flood (its descriptors stay below 3/4 of
// its limit).
//
// Part 2 — one server under `ulimit -n 1024`, 1,100 connections that send nothing, then
// `PUT /v1/kv/y` and a read: both answered (before: a reset).
//
//   npm run build && node bench/cluster/idle-conns.js [--conns 21000] [--procs 3] [--seconds 30] [--small 1100]
//
// Every loop is bounded in count and time; only the processes it starts are stopped (by pid); its
// temp folders are removed.
'use strict';
const { fork, spawn } = require('node:child_process');
const { mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const net = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { REPO, freePort, loopbackCaller, sleep, startCluster } = require('../support');

const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);

// ---- holder mode: keep `count` connections pending against host:port from one local address ----
if (process.argv[2] === '--hold') {
  const [, , , port, localAddress, count, seconds] = process.argv;
  const target = Number(count);
  const end = Date.now() + Number(seconds) * 1000;
  const maxOpened = target * 20; // bound on reconnects
  let live = 0;
  let opened = 0;
  let closedByServer = 0;
  let errors = 0;
  const sockets = new Set();
  const open = () => {
    opened++;
    live++;
    const s = net.connect({ host: '127.0.0.1', port: Number(port), localAddress });
    sockets.add(s);
    s.on('error', () => errors++);
    s.on('close', () => {
      live--;
      closedByServer++;
      sockets.delete(s);
    });
  };
  (async () => {
    while (Date.now() < end && opened < maxOpened) {
      const missing = Math.min(target - live, maxOpened - opened, 2000);
      for (let i = 0; i < missing; i++) open();
      await sleep(250);
    }
    process.send({ opened, live, closedByServer, errors });
    for (const s of sockets) s.destroy();
    setTimeout(() => process.exit(0), 200);
  })();
  return;
}

const CONNS = Number(arg('--conns', '21000'));
const PROCS = Number(arg('--procs', '3'));
const SECONDS = Number(arg('--seconds', '30'));
const SMALL = Number(arg('--small', '1100'));
const call = loopbackCaller({ maxSockets: 8, timeoutMs: 5000 });

const fds = (pid) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return -1;
  }
};
const nofile = (pid) => Number(/^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1]);
async function raftOf(url) {
  const r = await call(url, 'GET', '/v1/agent/self', undefined, 3000);
  if (r.status !== 200) throw new Error(`agent/self ${r.status}`);
  return JSON.parse(r.body.toString()).Stats.raft;
}
async function refusals(url) {
  const r = await call(url, 'GET', '/v1/agent/metrics?format=prometheus', undefined, 3000);
  const out = {};
  for (const m of r.body.toString().matchAll(/^registry_rpc_refused_total\{reason="([a-z_]+)"\} (\d+)/gm)) out[m[1]] = Number(m[2]);
  const open = /^registry_rpc_connections (\d+)/m.exec(r.body.toString());
  return { refused: out, counted: open ? Number(open[1]) : undefined };
}

async function part1() {
  const cluster = await startCluster({ call, prefix: 'registry-idle-conns-', warm: { path: '/v1/kv/warm', body: 'w' } });
  try {
    const leader = cluster.leader();
    const follower = (leader + 1) % 3;
    const fUrl = cluster.urls[follower];
    const lUrl = cluster.urls[leader];
    const fPid = cluster.pid(follower);
    const serverPort = Number(new URL(cluster.urls[follower]).port) + 100; // cluster.sh: RPC = HTTP + 100
    const before = await raftOf(fUrl);
    console.log(`PART1 follower s${follower + 1} pid ${fPid} nofile ${nofile(fPid)} descriptors ${fds(fPid)} term ${before.term} leader ${before.leader}`);
    const per = Math.ceil(CONNS / PROCS);
    const holders = [...Array(PROCS).keys()].map((k) =>
      new Promise((resolve) => {
        const child = fork(__filename, ['--hold', String(serverPort), `127.0.0.${10 + k}`, String(per), String(SECONDS)], { stdio: 'inherit' });
        child.once('message', resolve);
        child.once('exit', () => resolve(null));
      }),
    );
    const end = Date.now() + SECONDS * 1000;
    let writes = 0;
    let failedWrites = 0;
    let followerErrors = 0;
    let maxLag = 0;
    let maxFds = 0;
    let lastSample = 0;
    let maxCounted = 0;
    let roleChanges = 0;
    while (Date.now() < end) {
      const r = await call(lUrl, 'PUT', `/v1/kv/idle/${writes}`, 'x'.repeat(1024), 5000).catch(() => ({ status: 0 }));
      if (r.status === 200) writes++;
      else failedWrites++;
      const target = (await raftOf(lUrl)).commitIndex;
      const t0 = Date.now();
      for (;;) {
        try {
          const s = await raftOf(fUrl);
          if (s.term !== before.term || s.leader !== before.leader) roleChanges++;
          if (s.appliedIndex >= target) break;
        } catch {
          followerErrors++;
        }
        if (Date.now() - t0 > 10_000) break;
        await sleep(20);
      }
      maxLag = Math.max(maxLag, Date.now() - t0);
      maxFds = Math.max(maxFds, fds(fPid));
      if (Date.now() - lastSample > 2000) {
        lastSample = Date.now();
        const { counted } = await refusals(fUrl).catch(() => ({}));
        if (counted !== undefined) maxCounted = Math.max(maxCounted, counted);
        console.log(`  t=${Math.round((SECONDS * 1000 - (end - Date.now())) / 1000)}s writes=${writes} follower-lag-max=${maxLag}ms descriptors=${fds(fPid)} port-connections=${counted}`);
      }
      await sleep(100);
    }
    const held = (await Promise.all(holders)).filter(Boolean);
    const after = await raftOf(fUrl);
    const { refused } = await refusals(fUrl);
    const opened = held.reduce((a, h) => a + h.opened, 0);
    console.log(`PART1 connections opened ${opened} by ${held.length} holders (pending at the end ${held.reduce((a, h) => a + h.live, 0)}, closed by the server ${held.reduce((a, h) => a + h.closedByServer, 0)})`);
    console.log(`PART1 writes ${writes} (failed ${failedWrites}); follower: max lag to the leader's commit ${maxLag} ms, HTTP errors ${followerErrors}, term/leader changes seen ${roleChanges}, term ${before.term} → ${after.term}, role ${after.role}`);
    console.log(`PART1 follower descriptors max ${maxFds} of ${nofile(fPid)}; server-port connections counted max ${maxCounted}; refusals ${JSON.stringify(refused)}`);
    const ok = failedWrites === 0 && followerErrors === 0 && maxLag < 2000 && after.term === before.term && after.leader === before.leader && maxFds < nofile(fPid) * 0.75 && opened >= CONNS;
    console.log(`PART1 ${ok ? 'MET' : 'NOT MET'}`);
    return ok;
  } finally {
    cluster.stop();
  }
}

async function part2() {
  const dir = mkdtempSync(join(tmpdir(), 'registry-idle-small-'));
  const httpPort = await freePort();
  const serverPort = await freePort();
  const url = `http://127.0.0.1:${httpPort}`;
  const bin = join(REPO, 'packages/cli/bin/registry.js');
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$0" "$@"', process.execPath, bin, 'agent', '-server', '-bootstrap-expect', '1', '-node', 'small', '-data-dir', join(dir, 'data'), '-bind', '127.0.0.1', '-client', '127.0.0.1', '-http-port', String(httpPort), '-server-port', String(serverPort), '-log-level', 'warn'], { stdio: 'ignore' });
  const sockets = [];
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await call(url, 'PUT', '/v1/kv/x', 'before', 2000).catch(() => ({ status: 0 }));
      if (r.status === 200) break;
      if (Date.now() > deadline) throw new Error('the small server took no write within 30 s');
      await sleep(200);
    }
    console.log(`PART2 server pid ${child.pid} nofile ${nofile(child.pid)}`);
    let closed = 0;
    for (let i = 0; i < SMALL; i++) {
      const s = net.connect({ host: '127.0.0.1', port: serverPort });
      s.on('error', () => undefined);
      s.on('close', () => closed++);
      sockets.push(s);
    }
    await sleep(1000);
    const t0 = Date.now();
    const put = await call(url, 'PUT', '/v1/kv/y', 'during', 10_000).catch((e) => ({ status: 0, body: Buffer.from(e.message) }));
    const putMs = Date.now() - t0;
    const get = await call(url, 'GET', '/v1/kv/y?raw', undefined, 10_000).catch((e) => ({ status: 0, body: Buffer.from(e.message) }));
    const { refused, counted } = await refusals(url);
    console.log(`PART2 ${SMALL} idle connections: PUT /v1/kv/y → ${put.status} ${put.body.toString().trim()} in ${putMs} ms; GET → ${get.status} ${get.body.toString()}; descriptors ${fds(child.pid)} of 1024; port-connections ${counted}; closed by the server ${closed}; refusals ${JSON.stringify(refused)}`);
    const ok = put.status === 200 && get.status === 200 && get.body.toString() === 'during';
    console.log(`PART2 ${ok ? 'MET' : 'NOT MET'}`);
    return ok;
  } finally {
    for (const s of sockets) s.destroy();
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
    rmSync(dir, { recursive: true, force: true });
  }
}

(async () => {
  const ok1 = await part1();
  const ok2 = await part2();
  call.close();
  process.exit(ok1 && ok2 ? 0 : 1);
})().catch((err) => {
  console.error(err);
  process.exit(2);
});
