#!/usr/bin/env node
// bench/cluster/profile-diff.js: CPU per 1,000 requests of two builds, from the servers' --cpu-prof
// profiles that bench/cluster/run.js writes (BENCH_CPU_PROF_DIR). On a shared machine req/s moves
// with everyone else's load; CPU time per request does much less, so two builds are compared by the
// self time of their servers per 1,000 requests — by file, by function, and for GC.
//
//   node bench/cluster/profile-diff.js <profDirA>:<resultsA>[,<dir>:<results>…] <profDirB>:<resultsB>[,…]
//       [--top 40] [--files 30]
//
// Each side may list several runs (summed). A run's servers are the profiles that lived longer than
// the measured phase (the cluster script's CLI calls are short processes and are left out). Only
// samples inside the load's span count: the (duration + 2) s in which the leader was busiest — wrk's
// 2 s warm-up and the measured run, both at the same concurrency, so a run's request count is the
// RESULT line's `requests` times (duration + 2) / duration. Start-up work (module loading and
// compilation, ajv's code generation) falls outside that span and is also left out by name.
'use strict';
const { readFileSync, readdirSync } = require('node:fs');
const { join } = require('node:path');

const argAt = (name) => process.argv.indexOf(name);
const opt = (name, dflt) => (argAt(name) >= 0 ? Number(process.argv[argAt(name) + 1]) : dflt);
const TOP = opt('--top', 40);
const FILES = opt('--files', 30);
const sides = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(i > 0 && all[i - 1].startsWith('--')));
if (sides.length !== 2) {
  console.error('usage: profile-diff.js <profDirA>:<resultsA>[,…] <profDirB>:<resultsB>[,…] [--top N] [--files N]');
  process.exit(2);
}

/** Functions and files that only run at start-up (or are the profiler's own idle marker). */
const STARTUP = /^(\(idle\)|\(root\)|compileFunction|compileForInternalLoader|readFileUtf8|internalModuleStat|wrapSafe|Module\._compile|Module\._load|Module\._resolveFilename|Module\._findPath|Module\._extensions\.\.js|realpathSync|statSync|loadESM|require)$/;
const STARTUP_FILE = /(node:internal\/modules\/|ajv\/dist\/compile\/|ajv\/dist\/vocabularies\/|ajv\/dist\/core|ajv-formats|typebox\/build)/;

function requestsOf(resultsFile) {
  const text = readFileSync(resultsFile, 'utf8');
  const header = text.match(/duration=(\d+)s/);
  const duration = header ? Number(header[1]) : 10;
  const line = text.split('\n').find((l) => l.startsWith('RESULT'));
  if (!line) throw new Error(`no RESULT line in ${resultsFile}`);
  const requests = Number(line.match(/ requests=(\d+)/)[1]);
  const rps = Number(line.match(/ ok_rps=(\d+)/)[1]);
  const load = (line.match(/ load1=([\d.]+)/) || [])[1];
  return { requests: (requests * (duration + 2)) / duration, measured: requests, rps, load, durationUs: duration * 1e6 };
}

/** Short location of a script: the path from the repo's packages/ or node_modules/ on. */
function shortUrl(url) {
  if (!url) return '(native)';
  const m = url.match(/\/(packages\/.*|node_modules\/.*|bench\/.*)$/);
  return m ? m[1].replace(/\/dist\//, '/') : url.replace(/^file:\/\//, '');
}

/** Each sample of a profile as [node id, absolute µs, self µs] (a sample's time is the gap to the next). */
function samplesOf(p) {
  const out = [];
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    out.push([p.samples[i], t, p.timeDeltas[i + 1] ?? 0]);
  }
  return out;
}

/**
 * The measured phase's time span: the `spanUs` window in which the leader did the most state-machine
 * work (samples in store/fsm/, which only writes cause — a start-up on a loaded machine can be busier
 * than the load itself, but does not apply commands). The profilers' clocks are the same monotonic
 * clock in every process of the machine, so that span is then cut out of every server's profile.
 */
function busiestSpan(profiles, spanUs) {
  let best = { busy: -1, from: 0 };
  for (const { samples, applying } of profiles) {
    const busyAt = samples.filter(([id]) => applying.has(id));
    let busy = 0;
    let first = 0;
    for (let last = 0; last < busyAt.length; last++) {
      busy += busyAt[last][2];
      while (busyAt[last][1] - busyAt[first][1] > spanUs) busy -= busyAt[first++][2];
      // The span ends with the last apply seen, and starts spanUs before it.
      if (busy > best.busy) best = { busy, from: busyAt[last][1] - spanUs };
    }
  }
  return [best.from, best.from + spanUs];
}

/** Self µs by function and by file, summed over a run's server profiles within the measured span. */
function addRun(acc, dir, durationUs) {
  const profiles = [];
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    if (p.endTime - p.startTime < durationUs) continue; // a CLI call, not a server
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const applying = new Set(p.nodes.filter((n) => /\/store\/dist\/fsm\//.test(n.callFrame.url)).map((n) => n.id));
    profiles.push({ byId, applying, samples: samplesOf(p) });
  }
  const [from, to] = busiestSpan(profiles, durationUs + 2e6);
  for (const { byId, samples } of profiles) {
    acc.servers += 1;
    const selfUs = new Map();
    for (const [id, t, us] of samples) if (t >= from && t <= to) selfUs.set(id, (selfUs.get(id) ?? 0) + us);
    for (const [id, us] of selfUs) {
      const { callFrame } = byId.get(id);
      const fn = callFrame.functionName || '(anonymous)';
      const file = shortUrl(callFrame.url);
      if (STARTUP.test(fn) || STARTUP_FILE.test(callFrame.url)) continue;
      // By name and file, not line: lines move between the two builds. Anonymous ones keep their line.
      const key = fn === '(anonymous)' ? `${fn} ${file}:${callFrame.lineNumber + 1}` : `${fn} ${file}`;
      acc.fns.set(key, (acc.fns.get(key) ?? 0) + us);
      const fileKey = callFrame.url ? file : fn; // (garbage collector), (program), natives by name
      acc.files.set(fileKey, (acc.files.get(fileKey) ?? 0) + us);
      acc.totalUs += us;
    }
  }
}

function side(spec) {
  const acc = { fns: new Map(), files: new Map(), totalUs: 0, requests: 0, servers: 0, runs: [] };
  for (const part of spec.split(',')) {
    const [dir, results] = part.split(':');
    const r = requestsOf(results);
    acc.requests += r.requests;
    acc.runs.push(r);
    addRun(acc, dir, r.durationUs);
  }
  return acc;
}

const a = side(sides[0]);
const b = side(sides[1]);
/** µs → ms per 1,000 requests. */
const per1k = (acc, us) => us / 1000 / (acc.requests / 1000);
const fmt = (x) => x.toFixed(2).padStart(8);

function table(title, mapA, mapB, limit) {
  const keys = new Set([...mapA.keys(), ...mapB.keys()]);
  const rows = [...keys].map((k) => {
    const x = per1k(a, mapA.get(k) ?? 0);
    const y = per1k(b, mapB.get(k) ?? 0);
    return { k, x, y, d: y - x };
  });
  console.log(`\n${title} (ms per 1,000 requests, all servers): A, B, B−A — largest |B−A| first`);
  for (const r of rows.sort((p, q) => Math.abs(q.d) - Math.abs(p.d)).slice(0, limit)) console.log(`${fmt(r.x)} ${fmt(r.y)} ${fmt(r.d)}  ${r.k}`);
}

for (const [label, acc] of [['A', a], ['B', b]]) {
  const runs = acc.runs.map((r) => `${r.rps}/s (load ${r.load})`).join(', ');
  console.log(`${label}: ${acc.servers} server profiles, ${Math.round(acc.requests)} requests incl. warm-up; runs ${runs}; CPU ${fmt(per1k(acc, acc.totalUs))} ms per 1,000`);
}
console.log(`B − A: ${fmt(per1k(b, b.totalUs) - per1k(a, a.totalUs))} ms per 1,000 (${(((per1k(b, b.totalUs) / per1k(a, a.totalUs)) - 1) * 100).toFixed(1)} %)`);
table('By file', a.files, b.files, FILES);
table('By function', a.fns, b.fns, TOP);
