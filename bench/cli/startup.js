#!/usr/bin/env node
// CPU time (user + system, from the kernel's rusage of each child) of `registry version` and
// `registry kv get k` over N runs, against a dev agent this script starts and stops. Each run is
// `bash -c '<cmd>; times'`: bash's `times` prints its children's rusage to the millisecond
// (/usr/bin/time rounds to 10 ms, too coarse for the few ms the CLI adds to a bare node).
// Usage: node bench/cli/startup.js [runs=30]   (build first: npx tsc -b packages/cli)
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { join } = require('node:path');

const BIN = join(__dirname, '..', '..', 'packages', 'cli', 'bin', 'registry.js');
const RUNS = Number(process.argv[2] || 30);
const HTTP_PORT = 18599;


/** CPU ms of one run of `command` (a shell word list), as bash's `times` reports its children. */
function cpuMs(command, env) {
  const r = spawnSync('/bin/bash', ['-c', `${command} >/dev/null; rc=$?; times; exit $rc`], { env: { ...process.env, ...env }, encoding: 'utf8' });
  const m = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(r.stdout);
  if (r.status !== 0 || !m) throw new Error(`${command} failed: ${r.stderr}`);
  return (Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4])) * 1000;
}

function measure(command, env) {
  const samples = [];
  for (let i = 0; i < RUNS; i++) samples.push(cpuMs(command, env));
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
    const load = () => require('node:os').loadavg()[0].toFixed(1);
    console.log(`runs=${RUNS} node=${process.version} (CPU ms = user + sys of the process, bash \`times\`, 1 ms resolution)`);
    console.log(`load average before: ${load()}`);
    const rows = [
      ['node -e 0', `"${process.execPath}" -e 0`],
      ['registry version', `"${process.execPath}" "${BIN}" version`],
      ['registry kv get k', `"${process.execPath}" "${BIN}" kv get k`],
    ];
    for (const [name, command] of rows) {
      const m = measure(command, env);
      console.log(`${name.padEnd(18)} median ${m.median.toFixed(0)} ms  p90 ${m.p90.toFixed(0)} ms  max ${m.max.toFixed(0)} ms`);
    }
    console.log(`load average after: ${load()}`);
  } finally {
    agent.kill('SIGTERM');
  }
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
