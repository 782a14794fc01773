#!/usr/bin/env node
// Which event-loop stalls of a run came from snapshot work (issue #34: "no event-loop stall ≥ 50 ms
// from taking, sending, installing or restoring a snapshot"), and whether each was the server's own
// work or the machine. Reads the servers' logs (side-by-side.js --keep-logs DIR) and the gaps that
// bench/cluster/loop-trace.js recorded in the same run (BENCH_LOOP_TRACE_DIR), and puts every gap of
// ≥ --min ms (default 50) that overlaps one of a server's snapshot windows under that window:
//   take     `raft: took snapshot … costMs=N` (its last N ms)
//   send     `raft: sent snapshot … ms=N` (the leader's last N ms)
//   receive  `raft: receiving a snapshot` → `raft: received snapshot`
//   restore  `raft: restoring the … snapshot` → `raft: restored the … snapshot`
// For each gap: its length, the main thread's time on a CPU and waiting for one during it, and the
// GC pauses in it. A gap mostly waiting for a CPU is the machine (two cores, three servers and a
// load generator), not the snapshot; a gap with ≥ --min ms on the CPU, or a GC pause that long, is.
// Last, whether takes make gaps more frequent: gaps per server-second inside a server's own take
// windows and outside them, over its load (from 15 s before its first take to the end of its last).
//   BENCH_CLUSTER_NODE_OPTIONS="-r $PWD/bench/cluster/loop-trace.js" BENCH_LOOP_TRACE_DIR=/tmp/lt/trace BENCH_LOOP_GAP_MS=50 \
//     node bench/bigstate/side-by-side.js --mib 1024 --idle 60 --systems registry --keep-logs /tmp/lt/logs
//   node bench/bigstate/stall-attribution.js --logs /tmp/lt/logs --trace /tmp/lt/trace [--min 50]
'use strict';
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { argOf } = require('../support');

const LOGS = argOf('--logs', '');
const TRACE = argOf('--trace', '');
const MIN = Number(argOf('--min', '50'));
if (!LOGS || !TRACE) {
  console.error('usage: stall-attribution.js --logs DIR --trace DIR [--min 50]');
  process.exit(2);
}

const num = (line, name) => Number(line.match(new RegExp(`\\b${name}[=":]+([\\d.]+)`))?.[1] ?? NaN);
const timeOf = (line) => Date.parse(line.slice(0, 24));

/** Per node: [kind, start ms, end ms] windows from its log(s). */
const windows = new Map();
for (const f of readdirSync(LOGS).filter((n) => n.endsWith('.log'))) {
  const node = f.split('-')[0];
  const list = windows.get(node) ?? [];
  windows.set(node, list);
  const open = {};
  for (const line of readFileSync(join(LOGS, f), 'utf8').split('\n')) {
    const at = timeOf(line);
    if (!Number.isFinite(at)) continue;
    if (line.includes('raft: took snapshot')) list.push(['take', at - num(line, 'costMs'), at]);
    else if (line.includes('raft: sent snapshot')) list.push(['send', at - num(line, 'ms'), at]);
    else if (line.includes('raft: receiving a snapshot')) open.receive = at;
    else if (line.includes('raft: received snapshot') && open.receive) list.push(['receive', open.receive, at]), delete open.receive;
    else if (/raft: restoring the \w+ snapshot/.test(line) && open.restore === undefined) open.restore = at;
    else if (/raft: restored the \w+ snapshot/.test(line) && open.restore !== undefined) list.push(['restore', open.restore, at]), delete open.restore;
  }
}

/** A server's takes and its load's span (a restarted server's trace files share them). */
function loadOf(node) {
  const takes = (windows.get(node) ?? []).filter(([kind]) => kind === 'take');
  if (takes.length === 0) return { takes, loadFrom: Infinity, loadTo: -Infinity };
  return { takes, loadFrom: Math.min(...takes.map(([, from]) => from)) - 15_000, loadTo: Math.max(...takes.map(([, , to]) => to)) };
}

const rows = [];
const perKind = {};
/** Gaps over the load, inside a server's own take windows and outside them, and the time of each. */
const takeRate = { inside: 0, outside: 0, insideMs: 0, loadMs: 0 };
for (const node of windows.keys()) {
  const { takes, loadFrom, loadTo } = loadOf(node);
  if (takes.length === 0) continue;
  takeRate.loadMs += loadTo - loadFrom;
  takeRate.insideMs += takes.reduce((sum, [, from, to]) => sum + (to - from), 0);
}
for (const f of readdirSync(TRACE).filter((n) => n.startsWith('loop-'))) {
  const lines = readFileSync(join(TRACE, f), 'utf8').split('\n');
  const node = lines[0].match(/-node (\S+)/)?.[1];
  const { takes, loadFrom, loadTo } = loadOf(node);
  for (const line of lines) {
    if (!line.startsWith('GAP')) continue;
    const end = Date.parse(line.match(/\bat=(\S+)/)?.[1] ?? '');
    const gap = num(line, 'gap_ms');
    if (!Number.isFinite(end) || !(gap >= MIN)) continue;
    const start = end - gap;
    if (end >= loadFrom && end <= loadTo) {
      if (takes.some(([, from, to]) => start < to && end > from)) takeRate.inside++;
      else takeRate.outside++;
    }
    for (const [kind, from, to] of windows.get(node) ?? []) {
      // A window's first log line is written as the loop comes back from whatever came before it
      // (a restart's log replay ends in "restoring the stored snapshot"), so a gap that ends at
      // that line, within the log's millisecond, was before the window, not in it; likewise a gap
      // that starts at a window's last line.
      if (Math.min(end, to) - Math.max(start, from) <= 2) continue;
      const cpu = num(line, 'cpu_ms');
      const wait = num(line, 'wait_ms');
      const gcs = (line.match(/gc=(\S+)/)?.[1] ?? '-').split(',').filter((g) => g !== '-').map((g) => Number(g.split(':')[1]));
      const gc = gcs.length ? Math.max(...gcs) : 0;
      rows.push({ node, kind, at: new Date(end).toISOString().slice(11, 23), gap, cpu, wait, gc });
      const k = (perKind[kind] ??= { gaps: 0, worst: 0, ownWorst: 0, own: 0 });
      k.gaps++;
      k.worst = Math.max(k.worst, gap);
      // The server's own: on the CPU (or in one GC pause) for at least MIN ms of it.
      const own = Math.max(cpu, gc);
      k.ownWorst = Math.max(k.ownWorst, own);
      if (own >= MIN) k.own++;
    }
  }
}

const counted = [...windows.values()].flat().reduce((m, [k]) => ((m[k] = (m[k] ?? 0) + 1), m), {});
console.log(`# snapshot windows in the logs: ${JSON.stringify(counted)}; gaps of ≥ ${MIN} ms overlapping them:`);
for (const r of rows.sort((a, b) => a.at.localeCompare(b.at))) {
  console.log(`${r.at} ${r.node} ${r.kind.padEnd(7)} gap ${r.gap.toFixed(0).padStart(4)} ms: on CPU ${r.cpu.toFixed(0).padStart(4)}, waiting for one ${r.wait.toFixed(0).padStart(4)}, largest GC pause ${r.gc.toFixed(0)}`);
}
console.log(`\n| window | gaps ≥ ${MIN} ms | longest | of which the server's own (CPU or one GC pause ≥ ${MIN} ms) | its longest own part, ms |`);
console.log('|---|---|---|---|---|');
for (const kind of ['take', 'send', 'receive', 'restore']) {
  const k = perKind[kind] ?? { gaps: 0, worst: 0, own: 0, ownWorst: 0 };
  console.log(`| ${kind} (${counted[kind] ?? 0}) | ${k.gaps} | ${k.worst.toFixed(0)} ms | ${k.own} | ${k.ownWorst.toFixed(0)} |`);
}
const perSecond = (n, ms) => (ms > 0 ? (n / (ms / 1000)).toFixed(2) : '-');
console.log(
  `\nGaps ≥ ${MIN} ms over the load: ${perSecond(takeRate.inside, takeRate.insideMs)} per server-second inside the server's own take windows (${takeRate.inside} in ${(takeRate.insideMs / 1000).toFixed(1)} s), ` +
    `${perSecond(takeRate.outside, takeRate.loadMs - takeRate.insideMs)} outside them (${takeRate.outside} in ${((takeRate.loadMs - takeRate.insideMs) / 1000).toFixed(1)} s).`,
);
