#!/usr/bin/env node
// What ran during each long stretch of a server's event loop: reads a .cpuprofile written by
// cpu-profile.js (or --cpu-prof) and prints runs of back-to-back non-idle samples (neither (idle)
// nor (program)): every one longer than --min ms (default 20), or with --top N alone the N longest.
// A stretch is an upper bound on one event-loop turn, not a turn: work that yields with setImmediate
// while more is queued shows no idle sample between its slices.
// For each stretch: when it started (s after the profile's start) and its length (the sum of its
// sample intervals: wall time, so a process waiting for a core looks longer), the functions that
// took most of it (self time), the outermost JS frames it ran under (what the loop was
// dispatching), its sample count (× the sampling interval, 1 ms by default in cpu-profile.js, is the
// CPU side), and "called from": the packages/ frames of its heaviest stack, outermost first. Last,
// the longest runs of consecutive (garbage collector) samples: pauses of the main thread.
//
//   node bench/cluster/stall-profile.js /tmp/prof/cpu-123.cpuprofile [--min 20] [--top 6]
//   node bench/cluster/stall-profile.js FILE.cpuprofile --top 5 [--functions 6] [--frames 6] [--gc 5]
//     --min MS       every stretch ≥ MS ms, in time order (the default, with MS = 20)
//     --top N        without --min: the N longest stretches, longest first;
//                    with --min (as before the merge): N entries in each self/under list
//     --functions N  entries in each self/under list (default 6)
//     --frames N     frames in the "called from" chain (default 6)
//     --gc N         GC runs listed at the end (default 5)
// It took over bench/catalog-scale/long-tasks.js: `long-tasks.js FILE [--top N]` (default 5) is
// `stall-profile.js FILE --top N` here.
'use strict';
const { readFileSync } = require('node:fs');

const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const BY_MIN = argAt('--min') >= 0 || argAt('--top') < 0;
const MIN = Number(arg('--min', '20'));
const TOP = Number(arg('--top', '6'));
const FUNCTIONS = Number(arg('--functions', BY_MIN ? String(TOP) : '6'));
const FRAMES = Number(arg('--frames', '6'));
const GC = Number(arg('--gc', '5'));
const file = process.argv[2];
if (!file || file.startsWith('--')) {
  console.error('usage: stall-profile.js <file.cpuprofile> [--min ms | --top n] [--functions n] [--frames n] [--gc n]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n) => {
  const f = n.callFrame;
  const where = f.url ? `${f.url.replace(/^.*\/(packages|node_modules)\//, '$1/')}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anon)'} ${where}`.trim();
};
const idle = (n) => ['(idle)', '(program)'].includes(n.callFrame.functionName);
const isGc = (n) => n.callFrame.functionName === '(garbage collector)';
/** The frames from the root down to node `id`. */
const stackOf = (id) => {
  const chain = [];
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) chain.push(byId.get(cur));
  return chain.reverse();
};
/** The outermost frame with a URL under a (root) or microtask/timer entry: what the loop ran. */
const outer = (id) => {
  const chain = stackOf(id);
  const named = chain.filter((n) => n.callFrame.url && !n.callFrame.url.startsWith('node:'));
  return named.length ? name(named[0]) : name(chain[Math.min(1, chain.length - 1)]);
};
const at = (us) => `@${((us - profile.startTime) / 1e6).toFixed(3)} s`;

// Sample i covers timeDeltas[i] µs, ending at times[i].
let t = profile.startTime;
const times = profile.timeDeltas.map((d) => (t += d));
const dt = (i) => profile.timeDeltas[i] ?? 0;
const stretches = [];
const gcRuns = [];
let cur = null;
let gc = null;
for (let i = 0; i < profile.samples.length; i++) {
  const n = byId.get(profile.samples[i]);
  if (isGc(n)) {
    gc ??= { start: times[i] - dt(i), ms: 0, samples: 0 };
    gc.ms += dt(i) / 1000;
    gc.samples++;
  } else if (gc) {
    gcRuns.push(gc);
    gc = null;
  }
  if (idle(n)) {
    if (cur) stretches.push(cur);
    cur = null;
    continue;
  }
  cur ??= { start: times[i] - dt(i), samples: [] };
  cur.end = times[i];
  cur.samples.push(i);
}
if (cur) stretches.push(cur);
if (gc) gcRuns.push(gc);

const ms = (s) => (s.end - s.start) / 1000;
const shown = BY_MIN ? stretches.filter((s) => ms(s) >= MIN) : [...stretches].sort((a, b) => ms(b) - ms(a)).slice(0, TOP);
const busyMs = stretches.reduce((a, s) => a + ms(s), 0);
const which = BY_MIN ? `${shown.length} stretches ≥ ${MIN} ms` : `the ${shown.length} longest of ${stretches.length} stretches`;
console.log(`${file}: ${((times.at(-1) - profile.startTime) / 1e6).toFixed(1)} s profiled, ${(busyMs / 1000).toFixed(1)} s busy, ${which}`);
for (const s of shown) {
  const self = new Map();
  const outers = new Map();
  const stacks = new Map();
  for (const i of s.samples) {
    const d = dt(i) / 1000;
    const n = byId.get(profile.samples[i]);
    self.set(name(n), (self.get(name(n)) ?? 0) + d);
    const o = outer(n.id);
    outers.set(o, (outers.get(o) ?? 0) + d);
    stacks.set(n.id, (stacks.get(n.id) ?? 0) + 1);
  }
  const top = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, FUNCTIONS).map(([k, v]) => `    ${v.toFixed(1).padStart(6)} ms  ${k}`).join('\n');
  // The heaviest stack: the leaf node sampled most often in the stretch.
  const heaviest = [...stacks].sort((a, b) => b[1] - a[1])[0][0];
  const callers = stackOf(heaviest)
    .filter((n) => n.callFrame.url && n.callFrame.url.includes('/packages/'))
    .slice(0, FRAMES)
    .map(name);
  console.log(`\n${at(s.start)}  ${ms(s).toFixed(1)} ms\n  self:\n${top(self)}\n  under:\n${top(outers)}`);
  console.log(`  samples: ${s.samples.length} (× the sampling interval: the CPU side; ${ms(s).toFixed(1)} ms is wall)`);
  console.log(`  called from: ${callers.join(' → ') || '(no packages/ frame)'}`);
}

gcRuns.sort((a, b) => b.ms - a.ms);
const gcList = gcRuns.slice(0, GC).map((g) => `${g.ms.toFixed(1)} ms (${g.samples} samples) ${at(g.start)}`);
console.log(`\nlongest GC pauses: ${gcList.join(', ') || 'none'}`);
