#!/usr/bin/env node
// bench/ca/agent.js: the CA through one agent (a real dev agent process over loopback).
//   npx tsc -b packages/cli && node bench/ca/agent.js [--duration 5]
// 1. leaves/s: GET /v1/agent/connect/ca/leaf/<new service> from 16 concurrent clients; each is a
//    cache miss: the agent makes a key and CSR, the leader allocates a serial through Raft and signs.
//    The signing rate limit is lifted for this phase (connect.csr_max_per_second = 0).
// 2. authorize/s: POST /v1/agent/connect/authorize answered from the agent cache (autocannon, 64
//    connections), next to GET /v1/status/leader on the same agent as the HTTP stack's ceiling.
'use strict';
const { spawn } = require('node:child_process');
const { mkdtempSync, writeFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const autocannon = require('autocannon');
const { freePort, sleep } = require('../support');

const REPO = join(__dirname, '..', '..');
const DURATION = Number(process.argv[process.argv.indexOf('--duration') + 1]) || 5;
if (!(DURATION > 0 && DURATION <= 60)) throw new Error('--duration must be in (0, 60]');


async function call(base, method, path, body) {
  const res = await fetch(base + path, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function leavesPerSecond(base) {
  let next = 0;
  let ok = 0;
  let limited = 0;
  let failed = 0;
  const deadline = Date.now() + DURATION * 1000;
  const start = Date.now();
  const worker = async () => {
    while (Date.now() < deadline) {
      const r = await fetch(`${base}/v1/agent/connect/ca/leaf/svc-${next++}`);
      await r.arrayBuffer();
      if (r.status === 200) ok++;
      else if (r.status === 429) limited++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const elapsed = (Date.now() - start) / 1000;
  return { rate: ok / elapsed, ok, limited, failed, elapsed };
}

function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 64, duration: DURATION, ...opts }, (err, r) => (err ? reject(err) : resolve(r)));
  });
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'registry-bench-ca-'));
  const configFile = join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify({ connect: { csr_max_per_second: 0, csr_max_concurrent: 0 } }));
  const httpPort = await freePort();
  const serverPort = await freePort();
  const agent = spawn(
    process.execPath,
    [join(REPO, 'packages/cli/bin/registry.js'), 'agent', '-dev', '-node', 'bench', '-http-port', String(httpPort),
      '-server-port', String(serverPort), '-config-file', configFile, '-log-level', 'warn'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const base = `http://127.0.0.1:${httpPort}`;
  try {
    let roots;
    for (let i = 0; i < 200; i++) {
      roots = await call(base, 'GET', '/v1/connect/ca/roots').catch(() => undefined);
      if (roots?.body?.ActiveRootID) break;
      await sleep(100);
    }
    if (!roots?.body?.ActiveRootID) throw new Error('the CA did not initialise');
    const td = roots.body.TrustDomain;

    const leaves = await leavesPerSecond(base);

    await call(base, 'POST', '/v1/connect/intentions', { SourceName: 'web', DestinationName: 'db', Action: 'allow' });
    await call(base, 'POST', '/v1/connect/intentions', { SourceName: '*', DestinationName: 'db', Action: 'deny' });
    const body = JSON.stringify({ Target: 'db', ClientCertURI: `spiffe://${td}/ns/default/dc/dc1/svc/web`, ClientCertSerial: '01' });
    const warm = await call(base, 'POST', '/v1/agent/connect/authorize', JSON.parse(body));
    if (warm.body?.Authorized !== true) throw new Error(`unexpected authorize answer ${JSON.stringify(warm.body)}`);
    const auth = await cannon({ url: `${base}/v1/agent/connect/authorize`, method: 'POST', body, headers: { 'content-type': 'application/json' } });
    const floor = await cannon({ url: `${base}/v1/status/leader` });

    const rows = [
      ['leaf certificates signed through the agent (16 clients, limit lifted)', `${leaves.rate.toFixed(0)}/s`, `${leaves.ok} in ${leaves.elapsed.toFixed(1)} s, ${leaves.limited} × 429, ${leaves.failed} other errors`, '≥ 200/s'],
      ['POST /v1/agent/connect/authorize (cached, 64 connections)', `${auth.requests.average.toFixed(0)}/s`, `p50 ${auth.latency.p50} ms, p99 ${auth.latency.p99} ms, ${auth.non2xx} non-2xx, ${auth.errors} errors`, '≥ 20,000/s'],
      ['GET /v1/status/leader (HTTP stack ceiling, same agent)', `${floor.requests.average.toFixed(0)}/s`, `p50 ${floor.latency.p50} ms, p99 ${floor.latency.p99} ms`, '—'],
    ];
    console.log('| measure | rate | detail | target |');
    console.log('|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  } finally {
    agent.kill('SIGTERM');
    await new Promise((r) => agent.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
