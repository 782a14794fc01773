// Counts the GC marking cycles V8 started inside each measured window of bench/snapshot/run.js, by
// reason, from one run's output under --trace-incremental-marking and --marks. A count is not
// distorted by the machine's load the way a wall-clock stall is: a cycle started by "external memory
// pressure" is the one the snapshot's own buffers bring on (docs/benchmarks/history.md, "Snapshots").
//   node --trace-incremental-marking bench/snapshot/run.js --marks [...] > out.txt; node bench/snapshot/marking.js out.txt
'use strict';
const { readFileSync } = require('node:fs');

const lines = readFileSync(process.argv[2], 'utf8').split('\n');
const windows = [];
const starts = [];
for (const line of lines) {
  const w = /^# window (\S+) (\d+) (\d+)/.exec(line);
  if (w) windows.push({ name: w[1], from: Number(w[2]), to: Number(w[3]) });
  const s = /\s(\d+) ms: \[IncrementalMarking\] Start \(([^)]+)\)/.exec(line);
  if (s) starts.push({ at: Number(s[1]), reason: s[2] });
}
const byName = new Map();
for (const w of windows) {
  const inside = starts.filter((s) => s.at >= w.from && s.at <= w.to);
  const entry = byName.get(w.name) ?? { windows: 0, seconds: 0, reasons: {} };
  entry.windows++;
  entry.seconds += (w.to - w.from) / 1000;
  for (const s of inside) entry.reasons[s.reason] = (entry.reasons[s.reason] ?? 0) + 1;
  byName.set(w.name, entry);
}
console.log('| window | count | seconds | marking cycles started, by reason |');
console.log('|---|---:|---:|---|');
for (const [name, e] of byName) {
  const reasons = Object.entries(e.reasons).map(([r, n]) => `${r}: ${n}`).join(', ') || 'none';
  console.log(`| ${name} | ${e.windows} | ${e.seconds.toFixed(1)} | ${reasons} |`);
}
