#!/usr/bin/env node
// The longest busy periods in a V8 CPU profile (.cpuprofile, e.g. from
// BENCH_CLUSTER_NODE_OPTIONS="-r bench/cluster/cpu-profile.js" BENCH_CPU_PROF_DIR=DIR), and what ran
// in each: a busy period is a run of consecutive samples none of which is (idle). It is an upper
// bound on one event-loop turn, not a turn: work that yields with setImmediate while more is queued
// shows no idle sample between its slices. For the --top longest it prints their length (sum of
// sample intervals: wall time, so a process waiting for a core looks longer; the sample count × the
// 1 ms interval is the CPU side), when they started (ms from the profile's start), and the functions
// with the most self time in them, with the outermost named frames of the heaviest stack (what
// called into the work). Last, the longest runs of consecutive (garbage collector) samples: those
// are pauses of the main thread.
//
//   node bench/catalog-scale/long-tasks.js FILE.cpuprofile [--top 5] [--functions 8]
'use strict';
const { readFileSync } = require('node:fs');

const file = process.argv[2];
const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const TOP = Number(arg('--top', '5'));
const FUNCTIONS = Number(arg('--functions', '8'));

const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n) => {
  const f = n.callFrame;
  const where = f.url ? `${f.url.replace(/^.*\/(packages|node_modules)\//, '$1/')}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
};
const isIdle = (id) => byId.get(id).callFrame.functionName === '(idle)';

// Turns: runs of non-idle samples.
const turns = [];
let t = 0;
let current = null;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = (profile.timeDeltas[i] ?? 0) / 1000;
  t += dt;
  const id = profile.samples[i];
  if (isIdle(id)) {
    if (current) turns.push(current);
    current = null;
    continue;
  }
  if (!current) current = { start: t - dt, ms: 0, samples: [] };
  current.ms += dt;
  current.samples.push(id);
}
if (current) turns.push(current);
turns.sort((a, b) => b.ms - a.ms);

const stackOf = (id) => {
  const out = [];
  for (let x = id; x !== undefined; x = parent.get(x)) out.push(byId.get(x));
  return out.reverse();
};

console.log(`${file}: ${turns.length} busy periods, ${profile.samples.length} samples`);
for (const turn of turns.slice(0, TOP)) {
  const self = new Map();
  const stacks = new Map();
  for (const id of turn.samples) {
    const key = label(byId.get(id));
    self.set(key, (self.get(key) ?? 0) + 1);
    stacks.set(id, (stacks.get(id) ?? 0) + 1);
  }
  const heaviest = [...stacks.entries()].sort((a, b) => b[1] - a[1])[0][0];
  const callers = stackOf(heaviest)
    .filter((n) => n.callFrame.url && n.callFrame.url.includes('/packages/'))
    .slice(0, Number(arg('--frames', '6')))
    .map(label);
  console.log(`\nbusy for ${turn.ms.toFixed(0)} ms (${turn.samples.length} samples) at ${turn.start.toFixed(0)} ms`);
  for (const [fn, n] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, FUNCTIONS)) console.log(`  ${String(n).padStart(5)}  ${fn}`);
  console.log(`  called from: ${callers.join(' → ') || '(no package frame)'}`);
}

// Consecutive (garbage collector) samples: the main thread paused for GC.
const gc = [];
let run = null;
t = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = (profile.timeDeltas[i] ?? 0) / 1000;
  t += dt;
  if (byId.get(profile.samples[i]).callFrame.functionName === '(garbage collector)') {
    if (!run) run = { start: t - dt, ms: 0, samples: 0 };
    run.ms += dt;
    run.samples++;
  } else if (run) {
    gc.push(run);
    run = null;
  }
}
if (run) gc.push(run);
gc.sort((a, b) => b.ms - a.ms);
console.log(`\nlongest GC pauses: ${gc.slice(0, TOP).map((g) => `${g.ms.toFixed(0)} ms (${g.samples} samples) at ${g.start.toFixed(0)} ms`).join(', ')}`);
