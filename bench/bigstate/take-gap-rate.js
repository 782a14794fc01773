#!/usr/bin/env node
// Are gaps of >= 50 ms more frequent while a server takes a snapshot than while it only serves the
// load? Reads the kept server logs (`raft: took snapshot … costMs=N`: the take's window) and the loop
// traces of one side-by-side.js run (the same --keep-logs and BENCH_LOOP_TRACE_DIR as for
// stall-attribution.js) and prints the gaps per server-second inside take windows and outside them,
// over the load (from 15 s before the first take to the end of the last).
//   node bench/bigstate/take-gap-rate.js DIR/logs DIR/trace
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const [logs, trace] = process.argv.slice(2);
if (!logs || !trace) throw new Error('usage: take-gap-rate.js DIR/logs DIR/trace');

/** [start, end] of every take, in ms since the epoch, from all servers' logs. */
const takes = [];
for (const f of fs.readdirSync(logs)) {
  for (const line of fs.readFileSync(path.join(logs, f), 'utf8').split('\n')) {
    if (!line.includes('raft: took snapshot')) continue;
    const end = Date.parse(line.slice(0, 24));
    takes.push([end - Number(/costMs=(\d+)/.exec(line)[1]), end]);
  }
}
if (takes.length === 0) throw new Error(`no 'took snapshot' lines in ${logs}`);
const from = Math.min(...takes.map(([a]) => a)) - 15_000;
const to = Math.max(...takes.map(([, b]) => b));

let inside = 0;
let outside = 0;
for (const f of fs.readdirSync(trace)) {
  for (const line of fs.readFileSync(path.join(trace, f), 'utf8').split('\n')) {
    if (!line.startsWith('GAP')) continue;
    const at = Date.parse(/at=(\S+)/.exec(line)[1]);
    const start = at - Number(/gap_ms=([\d.]+)/.exec(line)[1]);
    if (at < from || at > to) continue;
    if (takes.some(([a, b]) => start < b && at > a)) inside++;
    else outside++;
  }
}
// Take windows are each one server's; the load's time is counted once per server (three).
const takeS = takes.reduce((s, [a, b]) => s + (b - a), 0) / 1000;
const loadS = ((to - from) / 1000) * 3;
console.log(`load ${((to - from) / 1000).toFixed(0)} s × 3 servers; take windows ${takeS.toFixed(1)} server-s`);
console.log(`gaps ≥ 50 ms inside takes: ${inside} (${(inside / takeS).toFixed(2)} per server-s); outside: ${outside} (${(outside / (loadS - takeS)).toFixed(2)} per server-s)`);
