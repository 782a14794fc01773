#!/usr/bin/env node
// bench/large-answers/first-read-http.js (issue #16): the first read of each large listing through
// HTTP on a real agent process. A dev agent (`registry agent -dev`, real process on 127.0.0.1) is
// loaded with N nodes (each with one instance of `web` and its check) and N keys under `app/` via
// /v1/txn; nothing reads a listing while loading, so the next read of each is a first build. Then,
// for each kind, one `curl` fetches the large answer while this process pings the agent
// (GET /v1/status/leader) every 10 ms; printed: the slowest ping during the read (the longest the
// agent's event loop was held, plus the ping's own ~1 ms), the read's time and the agent's CPU.
//   nodes  — GET /v1/catalog/nodes
//   health — GET /v1/health/service/web
//   kv     — GET /v1/kv/app/?recurse
// Each round starts a fresh agent per way, alternating: "one-go" (REGISTRY_LISTING_BUILDS=one-go:
// every listing built in one go, as before) and "steps" (the default).
//
//   npm run build && node bench/large-answers/first-read-http.js [--size 100000] [--rounds 1]
//
// Only the agent processes this script starts (by PID) are stopped.
'use strict';
const { spawn, execFile } = require('node:child_process');
const { loadavg } = require('node:os');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');
const { cpuSeconds, freePort, loopbackCaller, sleep } = require('../support');

const REPO = join(__dirname, '..', '..');
const BIN = join(REPO, 'packages', 'cli', 'bin', 'registry.js');
const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const SIZE = Number(arg('--size', '100000'));
const ROUNDS = Number(arg('--rounds', '1'));

const call = loopbackCaller({ maxSockets: 16, timeoutMs: 60_000 });


async function startAgent(mode) {
  const httpPort = await freePort();
  const serverPort = await freePort();
  const env = { ...process.env, REGISTRY_LISTING_BUILDS: mode === 'one-go' ? 'one-go' : '' };
  const child = spawn(process.execPath, [BIN, 'agent', '-dev', '-node', 'bench-agent', '-http-port', String(httpPort), '-server-port', String(serverPort), '-log-level', 'warn'], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const r = await call(base, 'PUT', '/v1/kv/bench-ready', 'x', 2000);
      if (r.status === 200) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('agent not ready within 60 s');
    }
    await sleep(200);
  }
  const stop = async () => {
    child.kill('SIGTERM');
    const gone = new Promise((r) => child.once('exit', r));
    if ((await Promise.race([gone.then(() => true), sleep(10_000).then(() => false)])) !== true) child.kill('SIGKILL');
  };
  return { base, pid: child.pid, stop };
}

async function load(base, n) {
  const pad = (i) => String(i).padStart(6, '0');
  let nextNode = 0;
  let nextKey = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (nextNode < n || nextKey < n) {
        const ops = [];
        if (nextNode < n) {
          const first = nextNode;
          nextNode += 21;
          for (let i = first; i < Math.min(first + 21, n); i++) {
            const node = `node-${pad(i)}`;
            ops.push({ Node: { Verb: 'set', Node: { Node: node, Address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, Meta: { rack: `r${i % 16}` } } } });
            ops.push({ Service: { Verb: 'set', Node: node, Service: { ID: 'web-1', Service: 'web', Port: 8080, Tags: ['v1'] } } });
            ops.push({ Check: { Verb: 'set', Check: { Node: node, CheckID: 'web-alive', Name: 'web alive', Status: 'passing', ServiceID: 'web-1', Output: 'HTTP GET /health: 200 OK' } } });
          }
        } else {
          const first = nextKey;
          nextKey += 64;
          for (let i = first; i < Math.min(first + 64, n); i++) ops.push({ KV: { Verb: 'set', Key: `app/${pad(i)}/config`, Value: Buffer.from(`value ${i}`).toString('base64') } });
        }
        const r = await call(base, 'PUT', '/v1/txn', JSON.stringify(ops));
        if (r.status !== 200) throw new Error(`txn: ${r.status} ${r.body}`);
      }
    }),
  );
}

/** `curl` fetches `path` (so that this process's loop stays free for the pings); resolves with seconds and bytes. */
function fetchWithCurl(base, path) {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{time_total} %{size_download}', '--max-time', '300', base + path], (err, stdout) => {
      if (err) return reject(err);
      const [code, seconds, bytes] = stdout.trim().split(' ');
      if (code !== '200') return reject(new Error(`${path}: HTTP ${code}`));
      resolve({ seconds: Number(seconds), bytes: Number(bytes) });
    });
  });
}

async function firstRead(a, path) {
  let reading = true;
  let worstPingMs = 0;
  let pings = 0;
  const pinger = (async () => {
    while (reading) {
      const t0 = performance.now();
      await call(a.base, 'GET', '/v1/status/leader');
      const ms = performance.now() - t0;
      worstPingMs = Math.max(worstPingMs, ms);
      pings++;
      await sleep(Math.max(0, 10 - ms));
    }
  })();
  const cpu0 = cpuSeconds(a.pid);
  const r = await fetchWithCurl(a.base, path);
  const cpu = cpuSeconds(a.pid) - cpu0;
  reading = false;
  await pinger;
  return { ...r, worstPingMs, pings, agentCpuS: cpu };
}

(async () => {
  const PATHS = { nodes: '/v1/catalog/nodes', health: '/v1/health/service/web', kv: '/v1/kv/app/?recurse' };
  const rows = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? ['one-go', 'steps'] : ['steps', 'one-go']) {
      const a = await startAgent(mode);
      try {
        const t0 = Date.now();
        await load(a.base, SIZE);
        console.log(`LOADED mode=${mode} size=${SIZE} in ${((Date.now() - t0) / 1000).toFixed(1)} s load=${loadavg()[0].toFixed(1)}`);
        await sleep(2000);
        for (const [kind, path] of Object.entries(PATHS)) {
          const r = await firstRead(a, path);
          const line = `FIRST-READ-HTTP ${kind} mode=${mode} size=${SIZE} round=${round} slowest-ping=${r.worstPingMs.toFixed(0)} ms (${r.pings} pings) read=${(r.seconds * 1000).toFixed(0)} ms bytes=${r.bytes} agent-cpu=${(r.agentCpuS * 1000).toFixed(0)} ms load=${loadavg()[0].toFixed(1)}`;
          console.log(line);
          rows.push(line);
        }
      } finally {
        await a.stop();
      }
    }
  }
  call.close();
  console.log(rows.join('\n'));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
