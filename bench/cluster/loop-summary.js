#!/usr/bin/env node
// Sums up the loop-*.txt files of loop-trace.js (one per server): per server, after the first
// --from ms (start-up, default 4000), the GC time, the number of gaps > 20 ms and of GC pauses
// > 10 ms, the worst gap, and the peak heap and RSS.
//   node bench/cluster/loop-summary.js /tmp/lt [--from 4000]
'use strict';
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.argv[2];
const at = process.argv.indexOf('--from');
const FROM = at >= 0 ? Number(process.argv[at + 1]) : 4000;
const field = (line, name) => Number(line.match(new RegExp(`${name}=([\\d.]+)`))?.[1] ?? NaN);

for (const f of readdirSync(dir).filter((f) => f.startsWith('loop-')).sort()) {
  const lines = readFileSync(join(dir, f), 'utf8').split('\n');
  const node = lines[0].match(/-node (\S+)/)?.[1] ?? f;
  let gcMs = 0;
  let seconds = 0;
  let gaps = 0;
  let worst = 0;
  let longGcs = 0;
  let heap = 0;
  let rss = 0;
  for (const l of lines) {
    const t = field(l, 't');
    if (!(t >= FROM)) continue;
    if (l.startsWith('SEC')) {
      seconds++;
      gcMs += field(l, 'gc_ms');
      heap = Math.max(heap, field(l, 'heap_mb'));
      rss = Math.max(rss, field(l, 'rss_mb'));
    } else if (l.startsWith('GAP')) {
      gaps++;
      worst = Math.max(worst, field(l, 'gap_ms'));
      for (const m of l.matchAll(/:(\d+\.\d)/g)) if (Number(m[1]) > 10) longGcs++;
    }
  }
  console.log(`${node}: ${seconds} s traced, GC ${gcMs.toFixed(0)} ms (${(gcMs / Math.max(1, seconds)).toFixed(1)} ms/s), gaps>20ms ${gaps}, GC pauses>10ms in them ${longGcs}, worst gap ${worst.toFixed(0)} ms, peak heap ${heap} MB, rss ${rss} MB`);
}
