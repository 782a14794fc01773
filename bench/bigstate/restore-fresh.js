#!/usr/bin/env node
// A restart's restore alone (issue #34): --mib MiB of 4 KiB KV values are applied to a store and its
// snapshot written through Raft's own file store (WalStorage, as a server keeps it) into a temp
// folder; then each run is a fresh `node` process that opens that folder and restores the stored
// snapshot with Store.restoreFrom, as RaftNode.create does on a restart — the heap as small as a
// starting server's (restore-cpu.js restores beside the store it snapshotted, a large heap). Reports
// per run the restore's wall time, the longest gap of a 10 ms ping (the loop's longest stall), and
// the heap and RSS after it, and the longest GC pause. --node-flags passes V8 flags to the restoring
// processes: "--min-semi-space-size=16" starts them with the young generation a running agent has
// after its start-up (16 MiB semi-spaces, young-generation.ts), as a follower's install finds it.
// --scavenge-above MiB restores as the agent does (store-fsm.ts): a scavenge after any step once the
// young generation holds more than that; 0 leaves V8 alone; a list (4,1) alternates them run by run.
// --slice-ms sets the restore's slices (store.ts restoreFrom; 0, the default, keeps the store's); with
// lists of both, every budget runs with every slice length, and each line reports the longest gap's
// time on a CPU and waiting for one (the rest the main thread slept: in a GC, waiting for V8's helper).
// --trees restores with other builds' store (repository roots, comma-separated; default this one):
// a tree from before afterStep existed runs the budget check between slices (its betweenSlices).
// Usage: npx tsc -b packages/cli && node bench/bigstate/restore-fresh.js [--mib 1024] [--runs 3] [--node-flags "…[|…]"] [--scavenge-above 4[,1]] [--slice-ms 4[,2]] [--trees A[,B]]
'use strict';
const { execFileSync } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const { join } = require('node:path');
const { performance, PerformanceObserver } = require('node:perf_hooks');
const { storageAt, filledStore, writeSnapshot } = require('./kv-state');
const { argOf, stallMeter } = require('../support');

async function write(dir, mib) {
  const { store, count } = filledStore(mib);
  const storage = storageAt(dir);
  await writeSnapshot(storage, store, count);
  await storage.close();
}

const p90 = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)] : 0);

async function restore(dir, scavengeMiB, sliceMs, tree) {
  // Loaded in both arms, so that the heap the restore starts from is the same.
  const { Store } = require(join(tree, 'packages/store/dist/index.js'));
  const { scavengeAbove } = require(join(tree, 'packages/server/dist/index.js'));
  const afterStep = scavengeMiB > 0 ? scavengeAbove(scavengeMiB * 2 ** 20) : undefined;
  const storage = storageAt(dir);
  await storage.loadWithoutSnapshotData();
  let gcWorst = { ms: 0, kind: '-' };
  let gcTotal = 0;
  let gcCount = 0;
  const pauses = [];
  const kinds = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcTotal += e.duration;
      gcCount += 1;
      pauses.push(e.duration);
      if (e.duration > gcWorst.ms) gcWorst = { ms: e.duration, kind: kinds[e.detail?.kind] ?? String(e.detail?.kind) };
    }
  });
  gcs.observe({ entryTypes: ['gc'] });
  const meter = stallMeter();
  const t0 = performance.now();
  const reader = await storage.readSnapshot();
  await new Store({ datacenter: 'dc1' }).restoreFrom(reader, { afterStep, betweenSlices: afterStep, ...(sliceMs > 0 ? { sliceMs } : {}) });
  reader.close();
  const ms = performance.now() - t0;
  const worst = meter.stopWithDetail();
  await new Promise((r) => setImmediate(r)); // the observer's last entries
  gcs.disconnect();
  const m = process.memoryUsage();
  console.log(`restored ${(reader.size / 2 ** 20).toFixed(0)} MiB in ${ms.toFixed(0)} ms; longest gap ${worst.ms.toFixed(0)} ms (on CPU ${worst.cpuMs.toFixed(0)}, waiting ${worst.waitMs.toFixed(0)}), ${worst.over30} ≥ 30 ms; longest GC pause ${gcWorst.ms.toFixed(0)} ms (${gcWorst.kind}), p90 ${p90(pauses).toFixed(1)} ms, of ${gcCount} taking ${gcTotal.toFixed(0)} ms; heap ${(m.heapUsed / 2 ** 20).toFixed(0)} MiB, RSS ${(m.rss / 2 ** 20).toFixed(0)} MiB`);
  await storage.close();
}

async function main() {
  if (process.argv[2] === '--restore-in') return restore(process.argv[3], Number(process.argv[4]), Number(process.argv[5]), process.argv[6]);
  const mib = Number(argOf('--mib', '1024'));
  const runs = Number(argOf('--runs', '3'));
  // A `|`-separated list alternates flag sets run by run, as --scavenge-above does budgets.
  const flagSets = argOf('--node-flags', '').split('|').map((set) => set.split(' ').filter(Boolean));
  // A comma-separated list alternates the budgets run by run (an A/B in one state).
  const budgets = argOf('--scavenge-above', '0').split(',');
  // The restore's slice length in ms (0: the store's default); a list alternates as budgets do.
  const slices = argOf('--slice-ms', '0').split(',');
  // The trees whose store restores (an A/B of two builds); as long a list as the budgets pairs each
  // tree with its budget, else every tree runs every budget.
  const trees = argOf('--trees', join(__dirname, '../..')).split(',');
  const arms = [];
  for (const flags of flagSets) {
    for (const [t, tree] of trees.entries()) {
      for (const budget of trees.length > 1 && trees.length === budgets.length ? [budgets[t]] : budgets) {
        for (const slice of slices) arms.push({ flags, tree, budget, slice });
      }
    }
  }
  console.log(`# ${new Date().toISOString()} node ${process.version}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`# node bench/bigstate/restore-fresh.js ${process.argv.slice(2).join(' ')}`);
  const dir = mkdtempSync(join(os.tmpdir(), 'restore-fresh-'));
  try {
    await write(dir, mib);
    for (let r = 1; r <= runs; r++) {
      for (const { flags, tree, budget, slice } of arms) {
        const labels = [];
        if (trees.length > 1) labels.push(tree);
        if (budgets.length > 1) labels.push(`scavenge above ${budget} MiB`);
        if (slices.length > 1) labels.push(`slices of ${slice} ms`);
        if (flagSets.length > 1) labels.push(flags.join(' ') || 'no flags');
        const label = labels.length ? ` (${labels.join('; ')})` : '';
        process.stdout.write(`run ${r}${label}: ${execFileSync(process.execPath, [...flags, __filename, '--restore-in', dir, budget, slice, tree], { encoding: 'utf8' })}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
