#!/usr/bin/env node
// CPU time (user + system, from the kernel's rusage of each child) of `registry version` and
// `registry kv get k` over N runs, against a dev agent this script starts and stops, beside a bare
// `node -e 0` and `kv get` run from the compiled modules instead of its bundle
// (REGISTRY_CLI_NO_BUNDLE=1: what every command did before the bundles). Each run is
// `bash -c '<cmd>; times'`: bash's `times` prints its children's rusage to the millisecond
// (/usr/bin/time rounds to 10 ms, too coarse for the few ms the CLI adds to a bare node). The rows
// take turns run by run, so that a change in the machine's load falls on all of them alike.
// Usage: node bench/cli/startup.js [runs=30]   (build first: npm run build — tsc and the bundles)
// BASELINE_BIN=/path/to/other/packages/cli/bin/registry.js adds `version` and `kv get` rows of
// another build (e.g. an older commit's), taking turns with these: an A/B on the same machine.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { existsSync, readdirSync, rmSync } = require('node:fs');
const { join } = require('node:path');

const CLI = join(__dirname, '..', '..', 'packages', 'cli');
const BIN = join(CLI, 'bin', 'registry.js');
const RUNS = Number(process.argv[2] || 30);
const HTTP_PORT = 18599;

/** CPU ms of one run of `command` (a shell word list), as bash's `times` reports its children. */
function cpuMs(command, env) {
  const r = spawnSync('/bin/bash', ['-c', `${command} >/dev/null; rc=$?; times; exit $rc`], { env: { ...process.env, ...env }, encoding: 'utf8' });
  const m = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(r.stdout);
  if (r.status !== 0 || !m) throw new Error(`${command} failed: ${r.stderr}`);
  return (Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4])) * 1000;
}

function summary(samples) {
  samples.sort((a, b) => a - b);
  const pct = (p) => samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))];
  return { median: pct(50), p90: pct(90), max: samples[samples.length - 1] };
}

async function main() {
  if (!existsSync(join(CLI, 'dist', 'kv.bundle.json'))) throw new Error('packages/cli/dist has no bundles: run `npm run build` first');
  const agent = spawn(process.execPath, [BIN, 'agent', '-dev', '-node', 'bench', '-http-port', String(HTTP_PORT), '-server-port', '18398', '-dns-port', '-1', '-log-level', 'error'], { stdio: 'ignore' });
  const env = { REGISTRY_HTTP_ADDR: `127.0.0.1:${HTTP_PORT}` };
  try {
    // The code caches are written by a bundle's first run and hold what that run compiled: start
    // from none, put the key without the bundles, so that the first bundled run is the measured command's.
    for (const f of readdirSync(join(CLI, 'dist'))) if (f.endsWith('.bundle.cache')) rmSync(join(CLI, 'dist', f), { force: true });
    for (let i = 0; ; i++) {
      const r = spawnSync(process.execPath, [BIN, 'kv', 'put', 'k', 'v'], { env: { ...process.env, ...env, REGISTRY_CLI_NO_BUNDLE: '1' } });
      if (r.status === 0) break;
      if (i > 100) throw new Error('agent did not start');
      await new Promise((res) => setTimeout(res, 200));
    }
    const load = () => require('node:os').loadavg()[0].toFixed(1);
    console.log(`runs=${RUNS} node=${process.version} (CPU ms = user + sys of the process, bash \`times\`, 1 ms resolution)`);
    console.log(`load average before: ${load()}`);
    const rows = [
      ['node -e 0', `"${process.execPath}" -e 0`, {}],
      ['registry version', `"${process.execPath}" "${BIN}" version`, {}],
      ['registry kv get k', `"${process.execPath}" "${BIN}" kv get k`, {}],
      ['kv get, no bundle', `"${process.execPath}" "${BIN}" kv get k`, { REGISTRY_CLI_NO_BUNDLE: '1' }],
    ];
    const baseline = process.env.BASELINE_BIN;
    if (baseline) {
      rows.push(['baseline version', `"${process.execPath}" "${baseline}" version`, {}]);
      rows.push(['baseline kv get k', `"${process.execPath}" "${baseline}" kv get k`, {}]);
    }
    // One unmeasured run each: the first run of a bundle writes its V8 code cache.
    for (const [, command, extra] of rows) cpuMs(command, { ...env, ...extra });
    const samples = rows.map(() => []);
    for (let i = 0; i < RUNS; i++) rows.forEach(([, command, extra], j) => samples[j].push(cpuMs(command, { ...env, ...extra })));
    rows.forEach(([name], j) => {
      const m = summary(samples[j]);
      console.log(`${name.padEnd(18)} median ${m.median.toFixed(0)} ms  p90 ${m.p90.toFixed(0)} ms  max ${m.max.toFixed(0)} ms`);
    });
    console.log(`load average after: ${load()}`);
  } finally {
    agent.kill('SIGTERM');
  }
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
