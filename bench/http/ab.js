#!/usr/bin/env node
// bench/http/ab: two builds of the agent side by side, loaded in alternation, so that a change of
// the HTTP edge is measured against the build before it under the same (shared, drifting) load.
//   node bench/http/ab.js <root-before> <root-after> [--rounds 6] [--duration 3]
// Each root is a built tree (packages/*/dist, node_modules; e.g. a copy made before the change).
// Both agents run at once (one idle while the other is loaded); each round loads stale
// /v1/health/service/web reads and a trivial GET /v1/status/leader at c=64 on both, the order
// swapped every round. Prints req/s per round and the median of each, and the agent's CPU time per
// request (user + system, from /proc/<pid>/stat): on a shared machine throughput swings with the
// neighbours' load, the CPU an agent spends on one request much less.
'use strict';
const { spawn } = require('node:child_process');
const { mkdtempSync } = require('node:fs');
const { tmpdir, loadavg } = require('node:os');
const { join, resolve } = require('node:path');
const autocannon = require('autocannon');
const { cpuSeconds, freePort, sleep } = require('../support');

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);
const [beforeRoot, afterRoot] = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
const ROUNDS = opt('--rounds', 6);
const DURATION = opt('--duration', 3);

async function startAgent(root) {
  const httpPort = await freePort();
  const serverPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'registry-bench-ab-'));
  const agent = spawn(
    process.execPath,
    [join(root, 'packages/cli/bin/registry.js'), 'agent', '-server', '-bootstrap-expect', '1', '-node', 'bench',
      '-data-dir', join(dir, 'data'), '-http-port', String(httpPort), '-server-port', String(serverPort), '-log-level', 'error'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const base = `http://127.0.0.1:${httpPort}`;
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(`${base}/v1/status/leader`);
      if ((await res.json()) !== '') break;
    } catch {}
    await sleep(100);
  }
  for (let i = 0; i < 10; i++) {
    const res = await fetch(`${base}/v1/catalog/register`, {
      method: 'PUT',
      body: JSON.stringify({
        Node: `web-${i}`, Address: `10.0.0.${i}`,
        Service: { Service: 'web', Port: 80, Tags: ['v1'] },
        Check: { CheckID: 'web', Name: 'web', Status: 'passing', ServiceID: 'web' },
      }),
    });
    if (!res.ok) throw new Error(`register: ${res.status} ${await res.text()}`);
  }
  return { agent, base };
}

const cannon = (url) =>
  new Promise((res, rej) => autocannon({ url, connections: 64, duration: DURATION }, (err, r) => (err ? rej(err) : res(r))));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  if (!beforeRoot || !afterRoot) throw new Error('usage: node bench/http/ab.js <root-before> <root-after> [--rounds N] [--duration S]');
  const builds = { before: await startAgent(resolve(beforeRoot)), after: await startAgent(resolve(afterRoot)) };
  const workloads = { 'stale health reads': '/v1/health/service/web?stale', 'GET /v1/status/leader': '/v1/status/leader' };
  const results = {};
  try {
    console.log(`load average at start: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log('| round | workload | before req/s | after req/s | before CPU µs/req | after CPU µs/req |');
    console.log('|---:|---|---:|---:|---:|---:|');
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 ? ['before', 'after'] : ['after', 'before'];
      for (const [label, path] of Object.entries(workloads)) {
        const row = {};
        const cpu = {};
        for (const name of order) {
          const pid = builds[name].agent.pid;
          const cpu0 = cpuSeconds(pid);
          const r = await cannon(builds[name].base + path);
          row[name] = Math.round(r.requests.average);
          cpu[name] = ((cpuSeconds(pid) - cpu0) / r.requests.total) * 1e6;
        }
        const slot = (results[label] ??= { before: [], after: [], cpuBefore: [], cpuAfter: [] });
        slot.before.push(row.before);
        slot.after.push(row.after);
        slot.cpuBefore.push(cpu.before);
        slot.cpuAfter.push(cpu.after);
        console.log(`| ${round} | ${label} | ${row.before} | ${row.after} | ${cpu.before.toFixed(1)} | ${cpu.after.toFixed(1)} |`);
      }
    }
    console.log(`load average at end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log('');
    console.log('| workload (c=64) | before, median req/s | after, median req/s | change | before, median CPU µs/req | after, median CPU µs/req | change |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    const pct = (b, a) => `${(((a - b) / b) * 100).toFixed(1)} %`;
    for (const [label, r] of Object.entries(results)) {
      const [b, a, cb, ca] = [median(r.before), median(r.after), median(r.cpuBefore), median(r.cpuAfter)];
      console.log(`| ${label} | ${Math.round(b)} | ${Math.round(a)} | ${pct(b, a)} | ${cb.toFixed(1)} | ${ca.toFixed(1)} | ${pct(cb, ca)} |`);
    }
  } finally {
    for (const { agent } of Object.values(builds)) agent.kill('SIGKILL');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
