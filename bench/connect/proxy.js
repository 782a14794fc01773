#!/usr/bin/env node
// bench/connect/proxy: TCP through two registry proxies vs direct (issue #27).
//   npx tsc -b packages/cli first, then:
//   node bench/connect/proxy.js [--duration 5] [--keep-logs]
// Starts `registry agent -dev` on free loopback ports, an echo server (its own process) registered
// as `db` with a sidecar, `web` with a sidecar whose upstream is db, and two `registry connect proxy
// -sidecar-for` processes. Then, for each of: direct (client → echo) and proxied (client → web's
// upstream → TLS → db's proxy → echo), measures on connections opened beforehand
//   small: 64-byte request, wait for its 64-byte echo, repeat — requests/s and p50/p99 latency;
//   bulk:  64 KiB writes kept 1 MiB ahead of the echo — MB/s echoed;
// at c=1 and c=64, and
//   connect: a new connection per 64-byte request (TLS handshake, authorize, health lookup) at c=8.
// Prints one line per case and the proxied/direct ratio. Bounded: each case runs --duration s;
// the agent, proxies and echo server are killed by their own PIDs.
'use strict';
const { fork, spawn } = require('node:child_process');
const { closeSync, mkdtempSync, openSync, rmSync } = require('node:fs');
const net = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { CLI, REPO, argOf, freePort, sleep } = require('../support');

const DURATION_MS = Number(argOf('--duration', '5')) * 1000;
const KEEP = process.argv.includes('--keep-logs');

const children = [];
function start(args, dir, name) {
  const log = openSync(join(dir, `${name}.log`), 'a');
  // PROF_DIR=<dir>: each process writes a V8 CPU profile there when it exits.
  const prof = process.env.PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROF_DIR] : [];
  const child = spawn(process.execPath, [...prof, CLI, ...args], { stdio: ['ignore', log, log] });
  closeSync(log);
  children.push(child);
  return child;
}

async function api(base, method, path, body) {
  const res = await fetch(base + path, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function until(what, cond, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      if (await cond()) return;
    } catch {
      // not yet
    }
    await sleep(200);
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

const connect = (port) =>
  new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.setNoDelay(true);
    s.once('error', reject);
  });

/** One echo of `msg` on `s`; resolves once as many bytes came back. */
function echo(s, msg) {
  return new Promise((resolve, reject) => {
    let got = 0;
    const onData = (d) => {
      got += d.length;
      if (got >= msg.length) {
        s.off('data', onData);
        s.off('close', onClose);
        resolve();
      }
    };
    const onClose = () => reject(new Error('closed'));
    s.on('data', onData);
    s.once('close', onClose);
    s.write(msg);
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

async function small(port, c) {
  const socks = await Promise.all(Array.from({ length: c }, () => connect(port)));
  const msg = Buffer.alloc(64, 'a');
  const lat = [];
  const end = Date.now() + DURATION_MS;
  await Promise.all(
    socks.map(async (s) => {
      while (Date.now() < end) {
        const t = process.hrtime.bigint();
        await echo(s, msg);
        lat.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  for (const s of socks) s.destroy();
  lat.sort((x, y) => x - y);
  return { rps: lat.length / (DURATION_MS / 1000), p50: pct(lat, 50), p99: pct(lat, 99) };
}

async function bulk(port, c) {
  const socks = await Promise.all(Array.from({ length: c }, () => connect(port)));
  const chunk = Buffer.alloc(64 * 1024, 'b');
  const AHEAD = 1024 * 1024;
  let received = 0;
  const end = Date.now() + DURATION_MS;
  await Promise.all(
    socks.map(
      (s) =>
        new Promise((resolve) => {
          let sent = 0;
          let got = 0;
          const pump = () => {
            while (Date.now() < end && sent - got < AHEAD) {
              sent += chunk.length;
              if (!s.write(chunk)) return s.once('drain', pump);
            }
          };
          s.on('data', (d) => {
            got += d.length;
            if (Date.now() < end) received += d.length;
            if (Date.now() >= end) return resolve();
            pump();
          });
          s.on('close', resolve);
          pump();
          setTimeout(resolve, DURATION_MS + 2000);
        }),
    ),
  );
  for (const s of socks) s.destroy();
  return { mbps: received / 1e6 / (DURATION_MS / 1000) };
}

async function connectEach(port, c) {
  const msg = Buffer.alloc(64, 'c');
  const lat = [];
  let failed = 0;
  const end = Date.now() + DURATION_MS;
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (Date.now() < end) {
        const t = process.hrtime.bigint();
        try {
          const s = await connect(port);
          await echo(s, msg);
          s.destroy();
          lat.push(Number(process.hrtime.bigint() - t) / 1e6);
        } catch {
          failed++;
        }
      }
    }),
  );
  lat.sort((x, y) => x - y);
  return { rps: lat.length / (DURATION_MS / 1000), p50: pct(lat, 50), p99: pct(lat, 99), failed };
}

/** Each case, and its concurrencies. ONLY=small,bulk,connect picks some. */
const ALL = [['small', small, [1, 64]], ['bulk', bulk, [1, 64]], ['connect', connectEach, [1, 8]]];

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-connect-'));
  try {
    const [http, dns, server, echoPort, dbProxy, webProxy, up] = await Promise.all(Array.from({ length: 7 }, freePort));
    start(['agent', '-dev', '-node', 'bench-dev', '-bind', '127.0.0.1', '-client', '127.0.0.1', '-http-port', String(http), '-dns-port', String(dns), '-server-port', String(server), '-log-level', 'warn'], dir, 'agent');
    const base = `http://127.0.0.1:${http}`;
    await until('agent', async () => (await api(base, 'GET', '/v1/status/leader')) !== '', 30_000);
    const echoChild = fork(join(__dirname, 'echo-server.js'), [String(echoPort)], { stdio: 'ignore' });
    children.push(echoChild);
    await new Promise((r) => echoChild.once('message', r));
    await until('CA', async () => (await api(base, 'GET', '/v1/agent/connect/ca/roots')).ActiveRootID !== '', 30_000);
    await api(base, 'PUT', '/v1/agent/service/register', { Name: 'db', Port: echoPort, Connect: { SidecarService: { Port: dbProxy } } });
    await api(base, 'PUT', '/v1/agent/service/register', { Name: 'web', Port: 1, Connect: { SidecarService: { Port: webProxy, Proxy: { Upstreams: [{ DestinationName: 'db', LocalBindPort: up }] } } } });
    const addr = ['-http-addr', `127.0.0.1:${http}`, '-log-level', process.env.PROXY_LOG_LEVEL || 'warn'];
    start(['connect', 'proxy', '-sidecar-for', 'db', ...addr], dir, 'db-proxy');
    start(['connect', 'proxy', '-sidecar-for', 'web', ...addr], dir, 'web-proxy');
    // The db sidecar is offered once its TCP check passes (up to its 10 s interval).
    await until('traffic through the proxies', async () => {
      const s = await connect(up);
      try {
        await Promise.race([echo(s, Buffer.from('ping')), sleep(1000).then(() => Promise.reject(new Error('timeout')))]);
        return true;
      } finally {
        s.destroy();
      }
    }, 60_000);

    const rows = [];
    for (const [name, fn, cs] of ALL.filter(([name]) => !process.env.ONLY || process.env.ONLY.split(',').includes(name))) {
      for (const c of cs) {
        const direct = await fn(echoPort, c);
        const proxied = await fn(up, c);
        rows.push({ name, c, direct, proxied });
        const f = (r) => Object.entries(r).map(([k, v]) => `${k}=${typeof v === 'number' ? (Number.isInteger(v) ? v : v.toFixed(2)) : v}`).join(' ');
        const key = name === 'bulk' ? 'mbps' : 'rps';
        console.log(`${name.padEnd(7)} c=${String(c).padEnd(2)}  direct: ${f(direct)}  |  proxied: ${f(proxied)}  |  ratio ${(proxied[key] / direct[key]).toFixed(2)}`);
      }
    }
  } finally {
    for (const c of children) {
      try {
        c.kill('SIGTERM');
      } catch {
        // gone already
      }
    }
    await sleep(process.env.PROF_DIR ? 3000 : 500);
    for (const c of children) {
      if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    }
    if (KEEP) console.log(`logs in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
