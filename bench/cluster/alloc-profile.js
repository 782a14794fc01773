// Preload (`BENCH_CLUSTER_NODE_OPTIONS="-r $PWD/bench/cluster/alloc-profile.js"`): V8's sampling heap
// profiler over the whole process, with what was collected since kept in the samples (so the
// profile shows what a write *allocates*, the young generation's work, not only what survives).
// Writes $BENCH_ALLOC_PROF_DIR/alloc-<node>-<pid>.json at exit: the top allocating functions by
// sampled bytes and the process's allocation rate (bytes sampled over its life). Only the agent.
'use strict';
if (process.argv.includes('agent')) install();

function install() {
  const inspector = require('node:inspector');
  const { writeFileSync, mkdirSync } = require('node:fs');
  const { join } = require('node:path');
  const session = new inspector.Session();
  session.connect();
  session.post('HeapProfiler.enable');
  // 32 KiB between samples on average; the GC flags keep samples of objects already collected.
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 32 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const started = process.hrtime.bigint();
  let written = false;
  process.on('exit', () => {
    if (written) return;
    written = true;
    session.post('HeapProfiler.stopSampling', (err, res) => {
      if (err) return;
      const self = new Map();
      // A built-in (sort, Map, …) is named with the function that called it.
      const walk = (n, caller) => {
        const f = n.callFrame;
        let name = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(packages|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
        if (!f.url) name = `${f.functionName || '(anonymous)'} ← ${caller}`;
        if (n.selfSize > 0) self.set(name, (self.get(name) ?? 0) + n.selfSize);
        for (const c of n.children) walk(c, f.url ? name : caller);
      };
      walk(res.profile.head, '(root)');
      const total = [...self.values()].reduce((a, b) => a + b, 0);
      const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 40).map(([k, v]) => [k, v]);
      const dir = process.env.BENCH_ALLOC_PROF_DIR || '.';
      mkdirSync(dir, { recursive: true });
      const node = process.argv[process.argv.indexOf('-node') + 1] ?? 'agent';
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      writeFileSync(join(dir, `alloc-${node}-${process.pid}.json`), JSON.stringify({ seconds, sampledBytes: total, top }, null, 1));
    });
  });
}
