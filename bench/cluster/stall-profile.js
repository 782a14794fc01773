#!/usr/bin/env node
// What ran during each long stretch of a server's event loop: reads a .cpuprofile written by
// cpu-profile.js and prints every run of back-to-back non-idle samples longer than --min ms
// (default 20), with the functions that took most of it (self time) and the outermost JS frames
// it ran under (what the loop was dispatching).
//   node bench/cluster/stall-profile.js /tmp/prof/cpu-123.cpuprofile [--min 20] [--top 6]
'use strict';
const { readFileSync } = require('node:fs');

const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const MIN = Number(arg('--min', '20'));
const TOP = Number(arg('--top', '6'));
const file = process.argv[2];
if (!file) {
  console.error('usage: stall-profile.js <file.cpuprofile> [--min ms] [--top n]');
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
/** The outermost frame with a URL under a (root) or microtask/timer entry: what the loop ran. */
const outer = (id) => {
  const chain = [];
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) chain.push(byId.get(cur));
  chain.reverse();
  const named = chain.filter((n) => n.callFrame.url && !n.callFrame.url.startsWith('node:'));
  return named.length ? name(named[0]) : name(chain[Math.min(1, chain.length - 1)]);
};

let t = profile.startTime;
const times = profile.timeDeltas.map((d) => (t += d));
const stretches = [];
let cur = null;
for (let i = 0; i < profile.samples.length; i++) {
  const n = byId.get(profile.samples[i]);
  if (idle(n)) {
    if (cur) stretches.push(cur);
    cur = null;
    continue;
  }
  cur ??= { start: times[i - 1] ?? times[i], samples: [] };
  cur.end = times[i];
  cur.samples.push(i);
}
if (cur) stretches.push(cur);

const long = stretches.filter((s) => (s.end - s.start) / 1000 >= MIN);
const busyMs = stretches.reduce((a, s) => a + (s.end - s.start) / 1000, 0);
console.log(`${file}: ${((times.at(-1) - profile.startTime) / 1e6).toFixed(1)} s profiled, ${(busyMs / 1000).toFixed(1)} s busy, ${long.length} stretches ≥ ${MIN} ms`);
for (const s of long) {
  const self = new Map();
  const outers = new Map();
  for (const i of s.samples) {
    const ms = (times[i] - times[i - 1]) / 1000;
    const n = byId.get(profile.samples[i]);
    self.set(name(n), (self.get(name(n)) ?? 0) + ms);
    const o = outer(n.id);
    outers.set(o, (outers.get(o) ?? 0) + ms);
  }
  const top = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([k, v]) => `    ${v.toFixed(1).padStart(6)} ms  ${k}`).join('\n');
  console.log(`\n@${((s.start - profile.startTime) / 1e6).toFixed(3)} s  ${((s.end - s.start) / 1000).toFixed(1)} ms\n  self:\n${top(self)}\n  under:\n${top(outers)}`);
}
