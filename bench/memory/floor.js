#!/usr/bin/env node
// The floor under "an empty server ≤ 64 MiB RSS" (issue #30): what a Node 20 process holds before a
// line of registry runs — bare, then with the dependencies the design names loaded (express, ajv,
// level's classic-level, msgpackr, node-forge's X.509 part as the CA loads it), then with an Express
// app listening. Each step is a fresh process with the entry point's flags (--v8-pool-size=0), read
// from /proc/self/status after --settle seconds and again after a full GC.
//   node bench/memory/floor.js [--settle 12] [--runs 3]
'use strict';
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');

const REPO = join(__dirname, '..', '..');
const argOf = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
// Long enough that the allocation of start-up has left V8's 5 s window: a GC then shrinks the young
// generation, as the agent's does (packages/server/src/agent/young-generation.ts).
const SETTLE_S = Number(argOf('--settle', '12'));
const RUNS = Number(argOf('--runs', '3'));

const STEPS = {
  'bare node (a timer)': '',
  '+ express, ajv, classic-level, msgpackr': "require('express'); require('ajv'); require('classic-level'); require('msgpackr');",
  '+ node-forge X.509 (the CA)': "require('express'); require('ajv'); require('classic-level'); require('msgpackr'); require('node-forge/lib/x509');",
  '+ an Express app listening on 127.0.0.1': "const express = require('express'); require('ajv'); require('classic-level'); require('msgpackr'); require('node-forge/lib/x509'); const app = express(); app.get('/', (q, r) => r.send('ok')); app.listen(0, '127.0.0.1');",
};

// Runs in the child: the step's code, then the readings.
const reader = (code) => `
${code}
setInterval(() => {}, 50);
const read = () => {
  const s = require('fs').readFileSync('/proc/self/status', 'utf8');
  const kib = (k) => Number(new RegExp(k + ':\\\\s+(\\\\d+)').exec(s)[1]);
  const young = require('v8').getHeapSpaceStatistics().find((x) => x.space_name === 'new_space').space_size / 1048576;
  return { rss: kib('VmRSS') / 1024, anon: kib('RssAnon') / 1024, file: kib('RssFile') / 1024, heap: process.memoryUsage().heapUsed / 1048576, young };
};
setTimeout(() => {
  const before = read();
  gc();
  const after = read();
  process.stdout.write(JSON.stringify({ before, after }));
  process.exit(0);
}, ${SETTLE_S * 1000});
`;

const f = (n) => n.toFixed(1);
console.log(`# ${new Date().toISOString()} node ${process.version}; node bench/memory/floor.js --settle ${SETTLE_S} --runs ${RUNS}; MiB, median of ${RUNS}`);
console.log('| step | RSS | RSS after GC | anon / file after GC | heap used after GC | young generation after GC |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, code] of Object.entries(STEPS)) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(process.execPath, ['--v8-pool-size=0', '--expose-gc', '-e', reader(code)], { cwd: REPO, encoding: 'utf8', timeout: (SETTLE_S + 30) * 1000 });
    runs.push(JSON.parse(out));
  }
  const median = (pick) => runs.map(pick).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  console.log(
    `| ${name} | ${f(median((r) => r.before.rss))} | ${f(median((r) => r.after.rss))} | ${f(median((r) => r.after.anon))} / ${f(median((r) => r.after.file))} | ${f(median((r) => r.after.heap))} | ${f(median((r) => r.after.young))} |`,
  );
}
