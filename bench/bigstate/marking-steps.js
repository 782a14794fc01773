#!/usr/bin/env node
// How much of each snapshot-window gap was V8's incremental marking on the main thread: marking
// steps are not GC pauses to perf_hooks, so stall-attribution.js counts them as the server's own
// CPU. Needs a run whose servers also had V8's --trace-incremental-marking on (one line per step,
// with its duration, stamped in ms since the isolate started) and loop-trace.js's GAP lines (ms
// since the preload ran: a few ms later, hence the --slack). For every gap stall-attribution.js
// listed (its output in --attr), the steps that ended inside it: their count and summed time.
//   preload: if (process.argv[2] === 'agent') require('node:v8').setFlagsFromString('--trace-incremental-marking')
//   node bench/bigstate/marking-steps.js --attr DIR/attr.txt --logs DIR/logs --trace DIR/trace [--slack 20]
'use strict';
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { argOf } = require('../support');

const ATTR = argOf('--attr', '');
const LOGS = argOf('--logs', '');
const TRACE = argOf('--trace', '');
const SLACK = Number(argOf('--slack', '20'));
if (!ATTR || !LOGS || !TRACE) {
  console.error('usage: marking-steps.js --attr FILE --logs DIR --trace DIR [--slack 20]');
  process.exit(2);
}

/** Per node: its trace's GAP lines by the wall-clock time they end (ms of the day, as attr prints). */
const gapsByNode = new Map();
for (const f of readdirSync(TRACE).filter((n) => n.startsWith('loop-'))) {
  const lines = readFileSync(join(TRACE, f), 'utf8').split('\n');
  const node = lines[0].match(/-node (\S+)/)?.[1];
  const pid = lines[0].match(/pid=(\d+)/)?.[1];
  for (const line of lines) {
    const m = line.match(/^GAP t=(\d+) at=\S+T(\S+)Z gap_ms=([\d.]+)/);
    if (m) (gapsByNode.get(node) ?? gapsByNode.set(node, []).get(node)).push({ pid, t: Number(m[1]), at: m[2], gap: Number(m[3]) });
  }
}
/** Per pid: [end ms since isolate start, duration ms] of each incremental marking step. */
const steps = new Map();
for (const f of readdirSync(LOGS).filter((n) => n.endsWith('.log'))) {
  for (const line of readFileSync(join(LOGS, f), 'utf8').split('\n')) {
    const m = line.match(/^\[(\d+):\S+\]\s+(\d+) ms: \[IncrementalMarking\] Step .* in ([\d.]+)/);
    if (m) (steps.get(m[1]) ?? steps.set(m[1], []).get(m[1])).push([Number(m[2]), Number(m[3])]);
  }
}

for (const line of readFileSync(ATTR, 'utf8').split('\n')) {
  const m = line.match(/^(\d\d:\d\d:\d\d\.\d+) (\S+) (\w+)\s+gap\s+(\d+) ms/);
  if (!m) continue;
  const [, at, node, kind] = m;
  const gap = (gapsByNode.get(node) ?? []).find((g) => g.at === at);
  if (!gap) continue;
  const inside = (steps.get(gap.pid) ?? []).filter(([end]) => end >= gap.t - gap.gap - SLACK && end <= gap.t + SLACK);
  const ms = inside.reduce((sum, [, d]) => sum + d, 0);
  const longest = inside.reduce((max, [, d]) => Math.max(max, d), 0);
  console.log(`${line.trim()} | marking steps: ${inside.length}, ${ms.toFixed(1)} ms, longest ${longest.toFixed(1)}`);
}
