#!/usr/bin/env node
// A run's collections and event-loop gaps in one summary per run directory, for an A/B of V8
// settings (scripts/cluster.sh's REGISTRY_NODE_FLAGS) on the 1 GiB side-by-side. A directory holds
// logs/ (side-by-side.js --keep-logs, with bench/cluster/gc-trace.js preloaded), trace/
// (bench/cluster/loop-trace.js), out.txt (side-by-side's output) and attr.txt (stall-attribution.js's).
// Per run: load, restart and wiped-follower figures; loop gaps ≥ the trace's threshold, and how long
// the main thread was in each neither on a CPU nor waiting for one (blocked: in a collection, that
// is waiting for V8's helper thread); scavenges and mark-compacts (pauses, the largest ones) and the
// longest incremental marking step of any cycle (main-thread marking no GC pause reports); last,
// attr.txt's snapshot windows as kind:gaps/own(longest own part, ms).
//   D=/tmp/gc-a; BENCH_LOOP_TRACE_DIR=$D/trace BENCH_LOOP_GAP_MS=50 \
//     BENCH_CLUSTER_NODE_OPTIONS="-r $PWD/bench/cluster/gc-trace.js -r $PWD/bench/cluster/loop-trace.js" \
//     [REGISTRY_NODE_FLAGS=--single-threaded-gc] node bench/bigstate/side-by-side.js --mib 1024 --systems registry \
//     --idle 60 --settle 5 --catch-up-timeout 90 --keep-logs $D/logs > $D/out.txt
//   node bench/bigstate/stall-attribution.js --logs $D/logs --trace $D/trace > $D/attr.txt
//   node bench/bigstate/gc-summary.js DIR...
'use strict';
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { basename, join } = require('node:path');

/** Gaps over a second are a server's start (loading its modules), not a stall of a running one. */
const START_GAP_MS = 1000;

const linesOf = (dir) => (existsSync(dir) ? readdirSync(dir).flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n')) : []);
const top = (values, n = 5) => [...values].sort((a, b) => b - a).slice(0, n).map((v) => v.toFixed(0)).join(',') || '-';
const atLeast = (values, min) => values.filter((v) => v >= min).length;
const sum = (values) => values.reduce((a, b) => a + b, 0).toFixed(0);

for (const dir of process.argv.slice(2)) {
  const gaps = [];
  for (const line of linesOf(join(dir, 'trace'))) {
    const m = line.match(/^GAP t=\d+ at=\S+ gap_ms=([\d.]+) cpu_ms=([\d.]+) wait_ms=([\d.]+)/);
    if (!m) continue;
    const [gap, cpu, wait] = m.slice(1).map(Number);
    if (gap < START_GAP_MS) gaps.push({ gap, blocked: Math.max(0, gap - cpu - wait) });
  }
  const pauses = { s: [], mc: [] };
  const steps = [];
  for (const line of linesOf(join(dir, 'logs'))) {
    const m = line.match(/pause=([\d.]+) mutator=[\d.]+ gc=(\w+)/);
    if (!m) continue;
    (pauses[m[2]] ??= []).push(Number(m[1]));
    const step = line.match(/incremental_longest_step=([\d.]+)/);
    if (step) steps.push(Number(step[1]));
  }
  const read = (name) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : '');
  const out = read('out.txt');
  const cell = (label) => (out.match(new RegExp(`\\| ${label}[^|]*\\| ([^|]+)`))?.[1] ?? '?').trim();
  const windows = [...read('attr.txt').matchAll(/^\| (\w+) \(\d+\) \| (\d+) \| \d+ ms \| (\d+) \| (\d+) \|/gm)].map((m) => `${m[1]}:${m[2]}/${m[3]}(${m[4]})`);
  console.log(`${basename(dir)}: load ${cell('load, first half')} writes/s; restart ${cell('follower restart')} s; wiped follower ${cell('wiped follower')} s`);
  console.log(`  loop gaps: ${gaps.length} (≥ 100 ms: ${atLeast(gaps.map((g) => g.gap), 100)}), longest ${top(gaps.map((g) => g.gap))}; blocked ≥ 20 ms in ${atLeast(gaps.map((g) => g.blocked), 20)}, longest ${top(gaps.map((g) => g.blocked))}`);
  console.log(`  scavenges: ${pauses.s.length}, ≥ 20 ms ${atLeast(pauses.s, 20)}, longest ${top(pauses.s)}, total ${sum(pauses.s)} ms`);
  console.log(`  mark-compacts: ${pauses.mc.length}, ≥ 50 ms ${atLeast(pauses.mc, 50)}, longest ${top(pauses.mc)}, total ${sum(pauses.mc)} ms; longest incremental steps ${top(steps)}`);
  console.log(`  snapshot windows (gaps/own(longest own part)): ${windows.join(' ') || '-'}`);
}
