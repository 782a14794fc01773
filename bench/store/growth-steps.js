#!/usr/bin/env node
// The single slowest write while a table grows (sharded-map.ts): --keys KV writes of small values
// (or, with --kind catalog, registrations of as many nodes with a service and a check each) applied
// to a fresh store, as a server applies them, then the same state restored into another store from
// its snapshot. V8 grows a Map in one step that re-inserts every entry, so in one Map the write
// that adds the 131,073rd key costs the whole table's rehash. Reports, per run, the slowest apply and
// the slowest restore step (the restore runs in steps as a server's does), each also among those no
// garbage collection overlapped (a collection's pause is another matter: young-generation.ts).
// --store names another tree's packages/store (its dist built) for an A/B; runs alternate.
//   npx tsc -b packages/cli && node bench/store/growth-steps.js [--keys 300000] [--kind kv|catalog] [--runs 3] [--store packages/store[,other/packages/store]]
'use strict';
const { execFileSync } = require('node:child_process');
const { join, resolve } = require('node:path');
const { performance, PerformanceObserver } = require('node:perf_hooks');
const { argOf } = require('../support');

const PIECE = 1 << 20;


/** The slowest of `spans` ([start, ms, label]) that no garbage collection overlapped. */
function slowestWithoutGc(spans, gcs) {
  const clean = spans.filter(([t, ms]) => !gcs.some((g) => g.startTime < t + ms && g.startTime + g.duration > t));
  return clean.reduce((a, b) => (b[1] > a[1] ? b : a), [0, 0, '-']);
}

/** Keeps the `n` slowest spans. */
function keeper(n) {
  const spans = [];
  return {
    spans,
    add(t, ms, label) {
      if (spans.length < n) spans.push([t, ms, label]);
      else {
        let min = 0;
        for (let i = 1; i < n; i++) if (spans[i][1] < spans[min][1]) min = i;
        if (ms > spans[min][1]) spans[min] = [t, ms, label];
      }
    },
  };
}

/** The i-th write: a KV set, or a node registered with a service and a check (--kind catalog). */
function command(kind, i, value) {
  if (kind === 'kv') return { type: 'kv.apply', op: { Verb: 'set', Key: `app/${String(i).padStart(8, '0')}`, Value: value, Flags: 0 } };
  return {
    type: 'catalog.register',
    req: {
      Node: `node-${i}`,
      Address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      Service: { ID: 'web', Service: 'web', Port: 80 },
      Check: { CheckID: 'serfHealth', Name: 'Serf Health Status', Status: 'passing' },
    },
  };
}

async function measure(storeDir, keys, kind) {
  const { Store } = require(join(storeDir, 'dist', 'index.js'));
  const gcs = [];
  const obs = new PerformanceObserver((list) => gcs.push(...list.getEntries()));
  obs.observe({ entryTypes: ['gc'] });
  const value = Buffer.from('v');
  const store = new Store({ datacenter: 'dc1' });
  const applies = keeper(64);
  for (let i = 0; i < keys; i++) {
    const cmd = command(kind, i, value);
    const t = performance.now();
    store.apply(i + 1, cmd);
    applies.add(t, performance.now() - t, `write ${i + 1}`);
  }
  // A restore in steps, timed step by step (the time between two calls of afterStep).
  const restored = new Store({ datacenter: 'dc1' });
  const bytes = store.snapshot();
  const steps = keeper(64);
  let last = performance.now();
  let step = 0;
  await restored.restoreFrom(
    // In 1 MiB pieces, as a server reads its stored snapshot (one piece would be decoded in one step).
    { chunks: Math.ceil(bytes.length / PIECE), read: async (i) => bytes.subarray(i * PIECE, (i + 1) * PIECE) },
    {
      sliceMs: 1,
      afterStep: () => {
        const now = performance.now();
        steps.add(last, now - last, `step ${++step}`);
        last = now;
      },
    },
  );
  await new Promise((r) => setImmediate(r)); // the observer's last entries
  obs.disconnect();
  const slowest = (k) => k.spans.reduce((a, b) => (b[1] > a[1] ? b : a), [0, 0, '-']);
  const [, applyMs, applyAt] = slowest(applies);
  const [, cleanApplyMs, cleanApplyAt] = slowestWithoutGc(applies.spans, gcs);
  const [, stepMs] = slowest(steps);
  const [, cleanStepMs, cleanStepAt] = slowestWithoutGc(steps.spans, gcs);
  return { applyMs, applyAt, cleanApplyMs, cleanApplyAt, stepMs, cleanStepMs, cleanStepAt };
}

async function main() {
  if (process.argv[2] === '--measure') {
    console.log(JSON.stringify(await measure(process.argv[3], Number(process.argv[4]), process.argv[5])));
    return;
  }
  const keys = Number(argOf('--keys', '300000'));
  const kind = argOf('--kind', 'kv');
  const runs = Number(argOf('--runs', '3'));
  const stores = argOf('--store', 'packages/store').split(',').map((s) => resolve(s));
  console.log(`# ${new Date().toISOString()} node ${process.version}`);
  console.log(`# node bench/store/growth-steps.js ${process.argv.slice(2).join(' ')}`);
  for (let r = 1; r <= runs; r++) {
    for (const dir of stores) {
      const out = JSON.parse(execFileSync(process.execPath, ['--max-old-space-size=4096', __filename, '--measure', dir, String(keys)], { encoding: 'utf8' }));
      console.log(
        `run ${r} ${kind} ${dir}: slowest apply ${out.applyMs.toFixed(1)} ms (${out.applyAt}), without a GC in it ${out.cleanApplyMs.toFixed(1)} ms (${out.cleanApplyAt}); ` +
          `slowest restore step ${out.stepMs.toFixed(1)} ms, without a GC ${out.cleanStepMs.toFixed(1)} ms (${out.cleanStepAt})`,
      );
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
