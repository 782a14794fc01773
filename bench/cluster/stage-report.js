#!/usr/bin/env node
// Reads the stages-*.txt files of stage-trace.js (one c=1 write load) and prints where a write's
// time goes: for every request the leader answered (http.req … http.end), the events of all three
// servers in that window, merged by time; then, per step from one event to the next (e.g.
// "s2 append.start → s2 append.end"), how often it occurred, its median and p90 in µs, and its
// share of the requests' total time. Also prints the median request and one sample timeline.
//   node bench/cluster/stage-report.js /tmp/stages [--leader s1] [--skip 500]
'use strict';
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.argv[2];
const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const SKIP = Number(arg('--skip', '300')); // warm-up requests left out
const SLOWEST = Number(arg('--slowest', '10')); // per cent of requests counted as "slow" below
const SHOW = Number(arg('--show', '0')); // how many of the slowest to print whole

const events = [];
for (const f of readdirSync(dir).filter((f) => f.startsWith('stages-'))) {
  for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
    if (!line) continue;
    const parts = line.split(' ');
    const node = parts.at(-1);
    events.push({ t: Number(parts[0]), what: parts[1], detail: parts.slice(2, -1).join(' '), node });
  }
}
events.sort((a, b) => a.t - b.t);
const counts = {};
for (const e of events) if (e.what === 'http.req') counts[e.node] = (counts[e.node] ?? 0) + 1;
const leader = arg('--leader', Object.entries(counts).sort((a, b) => b[1] - a[1])[0]?.[0]);

const requests = [];
let open = null;
for (let i = 0; i < events.length; i++) {
  const e = events[i];
  if (e.node === leader && e.what === 'http.req' && e.detail === 'PUT') open = { start: i };
  else if (open && e.node === leader && e.what === 'http.end') {
    requests.push({ from: open.start, to: i, us: e.t - events[open.start].t });
    open = null;
  }
}
const measured = requests.slice(SKIP);
if (measured.length === 0) throw new Error(`no requests after the first ${SKIP} on ${leader}`);
const pct = (xs, p) => {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))];
};
const total = measured.reduce((a, r) => a + r.us, 0);
console.log(`${leader} leads; ${measured.length} requests after ${SKIP} skipped: median ${pct(measured.map((r) => r.us), 50)} µs, p90 ${pct(measured.map((r) => r.us), 90)}, p99 ${pct(measured.map((r) => r.us), 99)}`);

const steps = new Map();
for (const r of measured) {
  for (let i = r.from + 1; i <= r.to; i++) {
    const a = events[i - 1];
    const b = events[i];
    const key = `${a.node} ${a.what} → ${b.node} ${b.what}`;
    let s = steps.get(key);
    if (!s) steps.set(key, (s = []));
    s.push(b.t - a.t);
  }
}
console.log('\n| step | per request | median µs | p90 µs | share of time |\n|---|---:|---:|---:|---:|');
for (const [key, xs] of [...steps].sort((a, b) => b[1].reduce((x, y) => x + y, 0) - a[1].reduce((x, y) => x + y, 0)).slice(0, 25)) {
  const sum = xs.reduce((x, y) => x + y, 0);
  console.log(`| ${key} | ${(xs.length / measured.length).toFixed(2)} | ${pct(xs, 50)} | ${pct(xs, 90)} | ${((100 * sum) / total).toFixed(1)} % |`);
}
const median = [...measured].sort((a, b) => a.us - b.us)[Math.floor(measured.length / 2)];
console.log(`\nA median request (${median.us} µs):`);
const t0 = events[median.from].t;
for (let i = median.from; i <= median.to; i++) {
  const e = events[i];
  console.log(`  +${String(e.t - t0).padStart(6)} µs  ${e.node} ${e.what} ${e.detail}`);
}

// The slowest SLOWEST per cent: the step that took longest in each, counted by step.
const slow = [...measured].sort((a, b) => b.us - a.us).slice(0, Math.max(1, Math.floor((measured.length * SLOWEST) / 100)));
const worst = new Map();
for (const r of slow) {
  let best = null;
  for (let i = r.from + 1; i <= r.to; i++) {
    const gap = events[i].t - events[i - 1].t;
    if (!best || gap > best.gap) best = { gap, key: `${events[i - 1].node} ${events[i - 1].what} → ${events[i].node} ${events[i].what} ${events[i].detail}` };
  }
  const w = worst.get(best.key) ?? { n: 0, us: 0 };
  w.n++;
  w.us += best.gap;
  worst.set(best.key, w);
}
console.log(`\nThe longest step of each of the ${slow.length} slowest requests (≥ ${slow.at(-1).us} µs):`);
for (const [key, w] of [...worst].sort((a, b) => b[1].us - a[1].us).slice(0, 12)) console.log(`  ${String(w.n).padStart(4)} × mean ${Math.round(w.us / w.n)} µs  ${key}`);
for (const r of slow.slice(0, SHOW)) {
  console.log(`\nA slow request (${r.us} µs):`);
  const t0 = events[r.from].t;
  for (let i = r.from; i <= r.to; i++) {
    const e = events[i];
    const gap = i > r.from ? e.t - events[i - 1].t : 0;
    console.log(`  +${String(e.t - t0).padStart(6)} µs ${gap >= 500 ? `(+${gap})` : ''.padEnd(0)}  ${e.node} ${e.what} ${e.detail}`);
  }
}
