// Small helpers every bench script shares.
'use strict';
const { execFileSync } = require('node:child_process');
const { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, rmdirSync, mkdirSync, writeFileSync } = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');

const REPO = join(__dirname, '..');
const CLUSTER = join(REPO, 'scripts', 'cluster.sh');

/** A port the OS hands out on 127.0.0.1 (bound, then released for the server to take). */
const freePort = () =>
  new Promise((res, rej) => {
    const s = net.createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** True once `cond()` answers truthy (a throw counts as not yet), false after `timeoutMs`; asked every `stepMs`. */
async function until(cond, timeoutMs, stepMs = 50) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await cond()) return true;
    } catch {
      // not yet
    }
    await sleep(stepMs);
  }
  return false;
}

/** The CLI a bench starts agents with (node_modules/.bin/registry's target). */
const CLI = join(REPO, 'packages', 'cli', 'bin', 'registry.js');

/**
 * The event loop's longest stall from now until stop(): the worst lateness of an `intervalMs` timer
 * (a stall shorter than one interval reads as 0). stopWithDetail() also says how much of that gap
 * the main thread was on a CPU and waiting for one (schedstat: the rest it slept, in a GC waiting
 * for V8's helpers or in the kernel), and how many gaps were 30 ms or more.
 */
function stallMeter(intervalMs = 10) {
  let last = performance.now();
  let sched = mainThreadSchedMs();
  let worst = { ms: 0, cpuMs: 0, waitMs: 0 };
  let over30 = 0;
  const t = setInterval(() => {
    const now = performance.now();
    const nowSched = mainThreadSchedMs();
    const ms = now - last - intervalMs;
    if (ms >= 30) over30++;
    if (ms > worst.ms) worst = { ms, cpuMs: nowSched.cpuMs - sched.cpuMs, waitMs: nowSched.waitMs - sched.waitMs };
    last = now;
    sched = nowSched;
  }, intervalMs);
  return {
    stop: () => (clearInterval(t), Math.max(0, worst.ms)),
    /** The longest gap with the main thread's ms on a CPU and waiting for one in it, and the gaps of 30 ms or more. */
    stopWithDetail: () => (clearInterval(t), { ...worst, over30 }),
  };
}

/**
 * V8's collections from now on: read() gives their count and total pause so far (after the loop's
 * next turn: the observer reports then), reset() starts over, stop() ends observing.
 */
function gcMeter() {
  const { PerformanceObserver } = require('node:perf_hooks');
  let count = 0;
  let pauseMs = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      count++;
      pauseMs += e.duration;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    read: async () => {
      await new Promise((r) => setTimeout(r, 20));
      return { count, pauseMs, text: `GC ${count}× ${pauseMs.toFixed(0)} ms` };
    },
    reset: () => {
      count = 0;
      pauseMs = 0;
    },
    stop: () => obs.disconnect(),
  };
}

/** The word after `--name` on the command line, or `dflt`. */
const argOf = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? dflt : process.argv[i + 1];
};

/**
 * An HTTP caller for a bench's own agents: call(base, method, path, body, timeoutMs) answers
 * { status, headers, body } (a Buffer), over keep-alive connections (at most `maxSockets`), and
 * refuses any target but 127.0.0.1. call.close() closes those connections (the process can then exit).
 */
function loopbackCaller({ maxSockets, timeoutMs: defaultTimeoutMs }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const call = (base, method, path, body, timeoutMs = defaultTimeoutMs) => {
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
  };
  call.close = () => agent.destroy();
  return call;
}

const portFree = (port) =>
  new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });

/** A base port B with B..B+n-1 (HTTP) and B+100..B+100+n-1 (server RPC) free, as scripts/cluster.sh lays out n servers. */
async function freeClusterBase(n = 3) {
  for (let attempt = 0; attempt < 50; attempt++) {
    // Below the kernel's ephemeral range (32768+ here): a port chosen there can be taken by an
    // outgoing connection between this check and the server binding it.
    const base = 10000 + Math.floor(Math.random() * 22000);
    const offsets = [...Array(n).keys()].flatMap((i) => [i, 100 + i]);
    if ((await Promise.all(offsets.map((d) => portFree(base + d)))).every(Boolean)) return base;
  }
  throw new Error('no free ports found');
}

/**
 * Three servers started by scripts/cluster.sh on free ports in a temp folder (`prefix` names it),
 * resolved once the leader takes the `warm` write ({ path, body }: a 200 within 30 s).
 * stop() copies the logs to `keepLogs` (if set), stops the servers through cluster.sh — or, if that
 * fails, SIGKILLs the recorded pids that are still this cluster's servers — and removes the folder.
 */
async function startCluster({ call, prefix, warm, keepLogs }) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const base = await freeClusterBase();
  const env = { ...process.env, REGISTRY_CLUSTER_DIR: dir, REGISTRY_HTTP_BASE: String(base), REGISTRY_SERVER_BASE: String(base + 100), REGISTRY_LOG_LEVEL: 'info', NODE_OPTIONS: process.env.BENCH_CLUSTER_NODE_OPTIONS ?? '' };
  const cmd = (...args) => execFileSync(CLUSTER, args, { env, encoding: 'utf8', timeout: 60_000, cwd: REPO }).trim();
  /** cmd() with some variables of its environment changed (e.g. NODE_OPTIONS for one restarted server). */
  const cmdWith = (extraEnv, ...args) => execFileSync(CLUSTER, args, { env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 60_000, cwd: REPO }).trim();
  const urls = [0, 1, 2].map((i) => `http://127.0.0.1:${base + i}`);
  const pid = (i) => Number(readFileSync(join(dir, `s${i + 1}`, 'pid'), 'utf8'));
  const logFile = (i) => join(dir, `s${i + 1}`, 'server.log');
  const stop = () => {
    try {
      if (keepLogs) {
        mkdirSync(keepLogs, { recursive: true });
        for (const i of [0, 1, 2]) cpSync(logFile(i), join(keepLogs, `s${i + 1}-${Date.now()}.log`));
      }
      cmd('clean');
    } catch (err) {
      // cluster.sh could not stop them (e.g. the script was being edited): the recorded pids, if
      // still our servers (their command line names this cluster's data dir), get a SIGKILL.
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
  // `start` waits 30 s for a leader; on a loaded machine (other benches, other test runs) that can
  // pass first. Asked again it starts none anew and waits again; after three tries the servers it
  // started are stopped, not left behind.
  for (let attempt = 1; ; attempt++) {
    try {
      cmd('start');
      break;
    } catch (err) {
      if (attempt >= 3) {
        stop();
        throw err;
      }
    }
  }
  const leader = () => Number(cmd('leader').split(/\s+/)[0]) - 1;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await call(urls[leader()], 'PUT', warm.path, warm.body, 2000);
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
  return { dir, urls, cmd, cmdWith, leader, pid, logFile, stop };
}

/**
 * A follower of `cluster` SIGKILLed, its data dir wiped with its node-id put back (same server, same
 * id), and restarted: answers { victim, started } (index, Date.now() just before the restart).
 */
function wipeAndRestartFollower(cluster) {
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
  return { victim, started };
}

/** CPU seconds (user + system) process `pid` has used so far, from /proc (Linux ticks of 1/100 s); NaN once it is gone. */
function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * This process's main thread (the event loop), from Linux's schedstat (ns): ms it ran on a CPU and
 * ms it was runnable but waiting for one. Process CPU would also count V8's and libuv's helper
 * threads, which do not hold the loop.
 */
function mainThreadSchedMs() {
  const [run, wait] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ').map(Number);
  return { cpuMs: run / 1e6, waitMs: wait / 1e6 };
}

const CPU_CGROUP = '/sys/fs/cgroup/cpu';
const CAP_PERIOD_US = 10_000;

/**
 * Give each process of `pids` its own CPU allowance of `share` of one core (a cgroup v1 `cpu`
 * group with a CFS quota per 10 ms), so that servers on one small machine stop taking CPU from
 * each other — the stand-in for a machine per server this box cannot provide. Needs root and the
 * v1 cpu controller at /sys/fs/cgroup/cpu. Returns a function that removes the groups once their
 * processes have exited (a group with a live process is left; the kernel refuses to remove it).
 */
function capCpu(pids, share) {
  if (!(share > 0 && share <= 2)) throw new Error(`--cpu-per-server takes a share of a core in (0, 2], not ${share}`);
  if (!existsSync(join(CPU_CGROUP, 'cpu.cfs_quota_us'))) throw new Error(`no cgroup v1 cpu controller at ${CPU_CGROUP}`);
  const groups = pids.map((pid) => {
    const dir = join(CPU_CGROUP, `registry-bench-${pid}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'cpu.cfs_period_us'), String(CAP_PERIOD_US));
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(Math.round(share * CAP_PERIOD_US)));
    writeFileSync(join(dir, 'cgroup.procs'), String(pid));
    return dir;
  });
  return () => {
    for (const dir of groups) {
      try {
        rmdirSync(dir);
      } catch {
        // a process still in it: the kernel refuses; the empty group is harmless and named by pid
      }
    }
  };
}

module.exports = { REPO, CLI, argOf, gcMeter, stallMeter, until, capCpu, cpuSeconds, mainThreadSchedMs, freeClusterBase, freePort, loopbackCaller, sleep, startCluster, wipeAndRestartFollower };
