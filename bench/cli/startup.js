#!/usr/bin/env node
// CPU time (user + system, from the kernel's rusage of each child) of `registry version` and
// `registry kv get k` over N runs, against a dev agent this script starts and stops.
// Usage: node bench/cli/startup.js [runs=30]   (build first: npx tsc -b packages/cli)
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { join } = require('node:path');

const BIN = join(__dirname, '..', '..', 'packages', 'cli', 'bin', 'registry.js');
const RUNS = Number(process.argv[2] || 30);
const HTTP_PORT = 18599;


function measure(args, env) {
  const samples = [];
  for (let i = 0; i < RUNS; i++) {
    const r = spawnSync('/bin/sh', ['-c', `/usr/bin/time -f '%U %S' "${process.execPath}" "${BIN}" ${args.join(' ')} >/dev/null`], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    const m = /([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
    if (r.status !== 0 || !m) throw new Error(`registry ${args.join(' ')} failed: ${r.stderr}`);
    samples.push((Number(m[1]) + Number(m[2])) * 1000);
  }
  samples.sort((a, b) => a - b);
  const pct = (p) => samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))];
  return { median: pct(50), p90: pct(90), max: samples[samples.length - 1] };
}

async function main() {
  const agent = spawn(process.execPath, [BIN, 'agent', '-dev', '-node', 'bench', '-http-port', String(HTTP_PORT), '-server-port', '18398', '-dns-port', '-1', '-log-level', 'error'], { stdio: 'ignore' });
  const env = { REGISTRY_HTTP_ADDR: `127.0.0.1:${HTTP_PORT}` };
  try {
    for (let i = 0; ; i++) {
      const r = spawnSync(process.execPath, [BIN, 'kv', 'put', 'k', 'v'], { env: { ...process.env, ...env } });
      if (r.status === 0) break;
      if (i > 100) throw new Error('agent did not start');
      await new Promise((res) => setTimeout(res, 200));
    }
    const baseline = (() => {
      const samples = [];
      for (let i = 0; i < RUNS; i++) {
        const r = spawnSync('/bin/sh', ['-c', `/usr/bin/time -f '%U %S' "${process.execPath}" -e 0`], { encoding: 'utf8' });
        const m = /([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
        samples.push((Number(m[1]) + Number(m[2])) * 1000);
      }
      samples.sort((a, b) => a - b);
      return samples[Math.floor(samples.length / 2)];
    })();
    console.log(`runs=${RUNS} node=${process.version} (CPU ms = user + sys; /usr/bin/time has 10 ms resolution)`);
    console.log(`node -e 0              median ${baseline.toFixed(0)} ms`);
    for (const args of [['version'], ['kv', 'get', 'k']]) {
      const m = measure(args, env);
      console.log(`registry ${args.join(' ').padEnd(13)} median ${m.median.toFixed(0)} ms  p90 ${m.p90.toFixed(0)} ms  max ${m.max.toFixed(0)} ms`);
    }
  } finally {
    agent.kill('SIGTERM');
  }
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
