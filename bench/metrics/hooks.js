#!/usr/bin/env node
// bench/metrics: the cost of the metric hooks a write pays on its way through one server, per
// call, against the built package (npx tsc -b packages/server first).
//   node bench/metrics/hooks.js [--calls 2000000]
// A write through HTTP pays: one HTTP route timer (`done`), one FSM timer (`fsmApplied`), and its
// share of one Raft commit and one apply batch observation (a batch per event-loop turn).
'use strict';
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');

const { Metrics } = require(join(__dirname, '../../packages/server/dist/metrics/metrics.js'));
const CALLS = Number(process.argv[process.argv.indexOf('--calls') + 1]) || 2_000_000;

function measure(name, fn) {
  for (let i = 0; i < 100_000; i++) fn(i); // warm up
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) fn(i);
  const ns = ((performance.now() - started) * 1e6) / CALLS;
  console.log(`| ${name} | ${ns.toFixed(0)} |`);
  return ns;
}

const m = new Metrics({ disableHostname: false, prometheusRetentionMs: 1 });
const route = m.httpRoute('PUT', '/v1/catalog/register');
console.log('| hook | ns per call |');
console.log('|---|---:|');
let total = 0;
total += measure('HTTP route timer `done(200, ms)`', (i) => route.done(200, (i % 50) / 10));
total += measure('FSM timer `fsmApplied("catalog.register", ms)`', (i) => m.fsmApplied('catalog.register', (i % 50) / 100));
total += measure('Raft commit observation (one per batch)', (i) => m.raftObserver.committed(1, (i % 50) / 10));
total += measure('Raft apply observation (one per batch)', (i) => m.raftObserver.applied(1, (i % 50) / 100));
total += measure('two performance.now() (the timing itself)', () => performance.now() + performance.now());
console.log(`| **all of a write, batches of one (worst case)** | **${total.toFixed(0)}** |`);
m.stop();
