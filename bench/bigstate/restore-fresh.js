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
// --scavenge-above MiB restores as the agent does (store-fsm.ts): a scavenge between slices once the
// young generation holds more than that; 0 leaves V8 alone; a list (4,1) alternates them run by run.
// Usage: npx tsc -b packages/cli && node bench/bigstate/restore-fresh.js [--mib 1024] [--runs 3] [--node-flags "…"] [--scavenge-above 4]
'use strict';
const { execFileSync } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const { join } = require('node:path');
const { performance, PerformanceObserver } = require('node:perf_hooks');
const { Store } = require('../../packages/store/dist/index.js');
const { storageAt, filledStore, writeSnapshot } = require('./kv-state');
const { argOf, stallMeter } = require('../support');

async function write(dir, mib) {
  const { store, count } = filledStore(mib);
  const storage = storageAt(dir);
  await writeSnapshot(storage, store, count);
  await storage.close();
}

async function restore(dir, scavengeMiB) {
  // Loaded in both arms, so that the heap the restore starts from is the same.
  const { scavengeAbove } = require('../../packages/server/dist/index.js');
  const betweenSlices = scavengeMiB > 0 ? scavengeAbove(scavengeMiB * 2 ** 20) : undefined;
  const storage = storageAt(dir);
  await storage.loadWithoutSnapshotData();
  let gcWorst = { ms: 0, kind: '-' };
  let gcTotal = 0;
  let gcCount = 0;
  const kinds = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcTotal += e.duration;
      gcCount += 1;
      if (e.duration > gcWorst.ms) gcWorst = { ms: e.duration, kind: kinds[e.detail?.kind] ?? String(e.detail?.kind) };
    }
  });
  gcs.observe({ entryTypes: ['gc'] });
  const meter = stallMeter();
  const t0 = performance.now();
  const reader = await storage.readSnapshot();
  await new Store({ datacenter: 'dc1' }).restoreFrom(reader, { betweenSlices });
  reader.close();
  const ms = performance.now() - t0;
  const worst = meter.stop();
  await new Promise((r) => setImmediate(r)); // the observer's last entries
  gcs.disconnect();
  const m = process.memoryUsage();
  console.log(`restored ${(reader.size / 2 ** 20).toFixed(0)} MiB in ${ms.toFixed(0)} ms; longest gap ${worst.toFixed(0)} ms; longest GC pause ${gcWorst.ms.toFixed(0)} ms (${gcWorst.kind}) of ${gcCount} taking ${gcTotal.toFixed(0)} ms; heap ${(m.heapUsed / 2 ** 20).toFixed(0)} MiB, RSS ${(m.rss / 2 ** 20).toFixed(0)} MiB`);
  await storage.close();
}

async function main() {
  if (process.argv[2] === '--restore-in') return restore(process.argv[3], Number(process.argv[4]));
  const mib = Number(argOf('--mib', '1024'));
  const runs = Number(argOf('--runs', '3'));
  const flags = argOf('--node-flags', '').split(' ').filter(Boolean);
  // A comma-separated list alternates the budgets run by run (an A/B in one state).
  const budgets = argOf('--scavenge-above', '0').split(',');
  console.log(`# ${new Date().toISOString()} node ${process.version}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`# node bench/bigstate/restore-fresh.js ${process.argv.slice(2).join(' ')}`);
  const dir = mkdtempSync(join(os.tmpdir(), 'restore-fresh-'));
  try {
    await write(dir, mib);
    for (let r = 1; r <= runs; r++) {
      for (const budget of budgets) {
        const label = budgets.length > 1 ? ` (scavenge above ${budget} MiB)` : '';
        process.stdout.write(`run ${r}${label}: ${execFileSync(process.execPath, [...flags, __filename, '--restore-in', dir, budget], { encoding: 'utf8' })}`);
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
