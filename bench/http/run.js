#!/usr/bin/env node
// bench/http: one dev agent (a real process), loaded over loopback.
//   node bench/http/run.js [--duration 5]
// Prints a markdown table: register writes/s, /v1/health/service reads/s (stale, default), a trivial
// GET /v1/status/leader, and the memory of the agent holding 10,000 blocking queries on 1,000 services, with the time
// for one write to wake exactly its service's watchers. Every phase is bounded in time and count.
'use strict';
const { spawn } = require('node:child_process');
const http = require('node:http');
const { mkdtempSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const autocannon = require('autocannon');
const { freePort, sleep } = require('../support');

const REPO = join(__dirname, '..', '..');
const DURATION = Number(process.argv[process.argv.indexOf('--duration') + 1]) || 5;



function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

async function json(base, method, path, body) {
  const res = await fetch(base + path, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return { res, body: text ? JSON.parse(text) : undefined };
}

function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 64, duration: DURATION, ...opts }, (err, r) => (err ? reject(err) : resolve(r)));
  });
}

async function startAgent() {
  const httpPort = await freePort();
  const serverPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'registry-bench-http-'));
  const agent = spawn(
    process.execPath,
    [join(REPO, 'packages/cli/bin/registry.js'), 'agent', '-server', '-bootstrap-expect', '1', '-node', 'bench',
      '-data-dir', join(dir, 'data'), '-http-port', String(httpPort), '-server-port', String(serverPort), '-log-level', 'warn'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const base = `http://127.0.0.1:${httpPort}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await json(base, 'GET', '/v1/status/leader')).body) break;
    } catch {}
    await sleep(100);
  }
  return { agent, base, httpPort };
}

async function main() {
  let { agent, base, httpPort } = await startAgent();
  const rows = [];
  try {
    for (let i = 0; i < 10; i++) {
      await json(base, 'PUT', '/v1/catalog/register', {
        Node: `web-${i}`, Address: `10.0.0.${i}`,
        Service: { Service: 'web', Port: 80, Tags: ['v1'] },
        Check: { CheckID: 'web', Name: 'web', Status: 'passing', ServiceID: 'web' },
      });
    }

    let n = 0;
    const writes = await cannon({
      url: `${base}/v1/catalog/register`,
      method: 'PUT',
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ Node: `w-${n++ % 5000}`, Address: '10.1.0.1', Service: { Service: 'load', Port: n } }) }) }],
    });
    rows.push(['register writes (c=64)', writes]);
    for (const mode of ['stale', 'default']) {
      const q = mode === 'stale' ? '?stale' : '';
      const r = await cannon({ url: `${base}/v1/health/service/web${q}` });
      rows.push([`health/service reads, ${mode} (c=64, 10 instances)`, r]);
    }
    // A trivial GET: what the HTTP edge alone costs (no read endpoint, no store).
    rows.push(['GET /v1/status/leader (c=64, trivial)', await cannon({ url: `${base}/v1/status/leader` })]);

    console.log('| workload | req/s | p50 ms | p99 ms | non-2xx |');
    console.log('|---|---:|---:|---:|---:|');
    for (const [label, r] of rows) {
      console.log(`| ${label} | ${Math.round(r.requests.average)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx} |`);
    }

    // 10,000 blocked watchers on 1,000 services, on a fresh agent: its memory is then the
    // watchers' and the 1,000 services', not what the write load above left in the heap.
    agent.kill('SIGKILL');
    ({ agent, base, httpPort } = await startAgent());
    const SERVICES = 1000;
    const WATCHERS = 10000;
    for (let s = 0; s < SERVICES; s += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, k) =>
          json(base, 'PUT', '/v1/catalog/register', { Node: `svc-node-${s + k}`, Address: '10.2.0.1', Service: { Service: `svc-${s + k}`, Port: 1 } }),
        ),
      );
    }
    const indexes = [];
    for (let s = 0; s < SERVICES; s++) {
      const { res } = await json(base, 'GET', `/v1/health/service/svc-${s}`);
      indexes.push(Number(res.headers.get('x-registry-index')));
    }
    const rssBefore = rssMiB(agent.pid);
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    const woken = new Map();
    let wokenCount = 0;
    const pending = [];
    for (let w = 0; w < WATCHERS; w++) {
      const s = w % SERVICES;
      pending.push(
        new Promise((resolve) => {
          const req = http.get(
            { host: '127.0.0.1', port: httpPort, path: `/v1/health/service/svc-${s}?index=${indexes[s]}&wait=60s`, agent: keepAlive },
            (res) => {
              res.resume();
              res.on('end', () => {
                wokenCount++;
                woken.set(s, (woken.get(s) || 0) + 1);
                resolve(Date.now());
              });
            },
          );
          req.on('error', () => resolve(null));
        }),
      );
    }
    await sleep(3000);
    const rssBlocked = rssMiB(agent.pid);
    const before = wokenCount;
    const t0 = Date.now();
    await json(base, 'PUT', '/v1/catalog/register', { Node: 'svc-node-7', Address: '10.2.0.1', Service: { Service: 'svc-7', Port: 2 } });
    const target = WATCHERS / SERVICES;
    for (let i = 0; i < 500 && (woken.get(7) || 0) < target; i++) await sleep(2);
    const wakeMs = Date.now() - t0;
    await sleep(500);
    const others = wokenCount - before - (woken.get(7) || 0);
    console.log('');
    console.log('| blocking queries | value |');
    console.log('|---|---:|');
    console.log(`| agent RSS before watchers | ${rssBefore.toFixed(0)} MiB |`);
    console.log(`| agent RSS with ${WATCHERS} blocked watchers on ${SERVICES} services | ${rssBlocked.toFixed(0)} MiB |`);
    console.log(`| one write → all ${target} watchers of its service answered | ${wakeMs} ms |`);
    console.log(`| watchers of other services woken by that write | ${others} |`);
    keepAlive.destroy();
    await Promise.race([Promise.all(pending), sleep(1000)]);
  } finally {
    agent.kill('SIGKILL');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
