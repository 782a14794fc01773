#!/usr/bin/env node
// What taking a snapshot of a large KV state costs the event loop (issue #34: at 1 GiB each server's
// take held its loop for seconds, and three at once left every loop waiting for a core): a store is
// filled with --mib MiB of 4 KiB values as a server applies them (kv-state.js, here with one
// proposer's request ids as a server makes them, so the request window is full: 100,000 ids), then
// its snapshot is persisted --runs times into a sink that keeps nothing (the encoding alone, as a
// server's take does before the file writes, which go to the pool). Reports per run the loop time
// the store counts for it (costMs), wall and process CPU time, V8's collections, and the longest the
// loop was held (the largest lateness of a 5 ms timer: one slice or step of the persist). --store
// DIR takes packages/store's build from another tree (an A/B, as bench/storage/wal-append.js does
// for raft).
//   npx tsc -b packages/cli && node --max-old-space-size=8000 bench/bigstate/take-cost.js [--mib 512] [--runs 3] [--store packages/store]
'use strict';
const { join, resolve } = require('node:path');
const { performance } = require('node:perf_hooks');
const { argOf, gcMeter, stallMeter } = require('../support');
const { filledStore, serverRequestIds } = require('./kv-state');

const MIB = Number(argOf('--mib', '512'));
const RUNS = Number(argOf('--runs', '3'));
const STORE = resolve(argOf('--store', join(__dirname, '..', '..', 'packages', 'store')));
const storeBuild = require(join(STORE, 'dist', 'index.js'));

async function main() {
  const { store } = filledStore(MIB, { storeBuild, requestId: serverRequestIds() });
  const gc = gcMeter();
  for (let run = 1; run <= RUNS; run++) {
    const handle = store.openSnapshot();
    gc.reset();
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    const meter = stallMeter(5);
    let bytes = 0;
    await handle.persistTo({ write: async (piece) => void (bytes += piece.length) });
    const wallMs = performance.now() - wall0;
    const heldMs = meter.stop();
    const cpu = process.cpuUsage(cpu0);
    handle.release();
    const gcs = await gc.read();
    console.log(
      `store=${STORE} mib=${MIB} run ${run}: costMs ${handle.costMs.toFixed(0)}, wall ${wallMs.toFixed(0)} ms, CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms, ` +
        `${(bytes / 2 ** 20).toFixed(0)} MiB, ${gcs.text}, loop held at most ${heldMs.toFixed(0)} ms`,
    );
  }
  gc.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
