#!/usr/bin/env node
// bench/connect/proxy: TCP through two registry proxies vs direct (issue #27).
//   npx tsc -b packages/cli first, then:
//   node bench/connect/proxy.js [--duration 5] [--rounds 1] [--consul] [--proxy-main <file>] [--keep-logs]
// Starts `registry agent -dev` on free loopback ports, an echo server (its own process) registered
// as `db` with a sidecar, `web` with a sidecar whose upstream is db, and two `registry connect proxy
// -sidecar-for` processes. Then, for each of: direct (client → echo) and proxied (client → web's
// upstream → TLS → db's proxy → echo), measures on connections opened beforehand
//   small: 64-byte request, wait for its 64-byte echo, repeat — requests/s and p50/p99 latency;
//   bulk:  64 KiB writes kept 1 MiB ahead of the echo — MB/s echoed;
// at c=1 and c=64, and
//   connect: a new connection per 64-byte request (TLS handshake, authorize, health lookup) at c=8.
// Prints one line per case and target with its ratio to direct. Targets besides direct:
//   relay:    two plain TCP relays (relay.js) in a row — the same processes and hops, none of the work;
//   registry: the two registry proxies (--proxy-main <dist/proxy/proxy-main.js>: run that build's
//             proxy instead of the CLI's, e.g. a copy of an older build, for A/B);
//   consul:   with --consul and a `consul` on PATH, two `consul connect proxy -sidecar-for` processes
//             (Consul 1.4) for a second pair of registrations (db2, web2) on the same agent and echo.
// --rounds N measures every case N times, the proxied targets in a rotated order each round (the
// machine is shared: alternating keeps slow spells from landing on one target only).
// Bounded: each case runs --duration s; the agent, proxies and echo server are killed by their own PIDs.
'use strict';
const { fork, spawn } = require('node:child_process');
const { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } = require('node:fs');
const net = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { CLI, REPO, argOf, freePort, sleep } = require('../support');

const DURATION_MS = Number(argOf('--duration', '5')) * 1000;
const KEEP = process.argv.includes('--keep-logs');
const ROUNDS = Number(argOf('--rounds', '1'));
const CONSUL = process.argv.includes('--consul');
const PROXY_MAIN = argOf('--proxy-main', '');

const children = [];
function start(args, dir, name, opts = {}) {
  const log = openSync(join(dir, `${name}.log`), 'a');
  // PROF_DIR=<dir>: each process writes a V8 CPU profile there when it exits.
  const prof = process.env.PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROF_DIR] : [];
  const [cmd, argv] = opts.command ? [opts.command, args] : [process.execPath, [...prof, opts.script ?? CLI, ...args]];
  const child = spawn(cmd, argv, { stdio: ['ignore', log, log], env: { ...process.env, ...opts.env } });
  closeSync(log);
  children.push(child);
  return child;
}

/** A child Node script that says 'ready' over IPC once it listens. */
async function forkReady(script, args) {
  const child = fork(script, args, { stdio: 'ignore' });
  children.push(child);
  await new Promise((r) => child.once('message', r));
  return child;
}

/** Until one echo through `port` comes back (a sidecar is offered once its TCP check passes, up to its 10 s interval). */
const flowing = (port, what) =>
  until(what, async () => {
    const s = await connect(port);
    try {
      await Promise.race([echo(s, Buffer.from('ping')), sleep(1000).then(() => Promise.reject(new Error('timeout')))]);
      return true;
    } finally {
      s.destroy();
    }
  }, 60_000);

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

/**
 * c connections, each through one echo first: through the proxies a connection is whole only once
 * the upstream has dialled (TLS handshake, authorize) — measured by the connect case, not here.
 */
async function opened(port, c) {
  const socks = await Promise.all(Array.from({ length: c }, () => connect(port)));
  await Promise.all(socks.map((s) => echo(s, Buffer.from('warm'))));
  return socks;
}

async function small(port, c) {
  const socks = await opened(port, c);
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
  const socks = await opened(port, c);
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
    const [http, dns, server, echoPort, dbProxy, webProxy, up, relayA, relayB, db2Proxy, web2Proxy, up2] = await Promise.all(Array.from({ length: 12 }, freePort));
    // Consul's proxy reads X-Consul-Index and sends X-Consul-Token: the agent speaks its dialect too.
    const cfg = join(dir, 'agent.json');
    writeFileSync(cfg, JSON.stringify({ http_config: { consul_compat: true } }));
    start(['agent', '-dev', '-node', 'bench-dev', '-bind', '127.0.0.1', '-client', '127.0.0.1', '-http-port', String(http), '-dns-port', String(dns), '-server-port', String(server), '-log-level', 'warn', '-config-file', cfg], dir, 'agent');
    const base = `http://127.0.0.1:${http}`;
    await until('agent', async () => (await api(base, 'GET', '/v1/status/leader')) !== '', 30_000);
    await forkReady(join(__dirname, 'echo-server.js'), [String(echoPort)]);
    await forkReady(join(__dirname, 'relay.js'), [String(relayB), String(echoPort)]);
    await forkReady(join(__dirname, 'relay.js'), [String(relayA), String(relayB)]);
    await until('CA', async () => (await api(base, 'GET', '/v1/agent/connect/ca/roots')).ActiveRootID !== '', 30_000);
    const register = async (db, web, dbPort, webPort, upPort) => {
      await api(base, 'PUT', '/v1/agent/service/register', { Name: db, Port: echoPort, Connect: { SidecarService: { Port: dbPort } } });
      await api(base, 'PUT', '/v1/agent/service/register', { Name: web, Port: 1, Connect: { SidecarService: { Port: webPort, Proxy: { Upstreams: [{ DestinationName: db, LocalBindPort: upPort }] } } } });
    };
    await register('db', 'web', dbProxy, webProxy, up);
    const logLevel = ['-log-level', process.env.PROXY_LOG_LEVEL || 'warn'];
    const addr = ['-http-addr', `127.0.0.1:${http}`];
    for (const svc of ['db', 'web']) {
      if (PROXY_MAIN) start([], dir, `${svc}-proxy`, { script: PROXY_MAIN, env: { REGISTRY_PROXY_ID: `${svc}-sidecar-proxy`, REGISTRY_HTTP_ADDR: `127.0.0.1:${http}`, REGISTRY_PROXY_LOG_LEVEL: process.env.PROXY_LOG_LEVEL || 'warn' } });
      else start(['connect', 'proxy', '-sidecar-for', svc, ...addr, ...logLevel], dir, `${svc}-proxy`);
    }
    const targets = [['relay', relayA], ['registry', up]];
    await flowing(up, 'traffic through the registry proxies');
    if (CONSUL) {
      await register('db2', 'web2', db2Proxy, web2Proxy, up2);
      for (const svc of ['db2', 'web2']) start(['connect', 'proxy', '-sidecar-for', svc, ...addr, ...logLevel], dir, `consul-${svc}-proxy`, { command: 'consul' });
      await flowing(up2, 'traffic through the Consul proxies');
      targets.push(['consul', up2]);
    }

    const f = (r) => Object.entries(r).map(([k, v]) => `${k}=${typeof v === 'number' ? (Number.isInteger(v) ? v : v.toFixed(2)) : v}`).join(' ');
    for (let round = 0; round < ROUNDS; round++) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]);
      for (const [name, fn, cs] of ALL.filter(([name]) => !process.env.ONLY || process.env.ONLY.split(',').includes(name))) {
        for (const c of cs) {
          const key = name === 'bulk' ? 'mbps' : 'rps';
          const direct = await fn(echoPort, c);
          console.log(`${name.padEnd(7)} c=${String(c).padEnd(2)} ${'direct'.padEnd(8)}  ${f(direct)}`);
          for (const [target, port] of order) {
            const r = await fn(port, c);
            console.log(`${name.padEnd(7)} c=${String(c).padEnd(2)} ${target.padEnd(8)}  ${f(r)}  ratio ${(r[key] / direct[key]).toFixed(2)}`);
          }
        }
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
