#!/usr/bin/env node
// bench/storage/wal-append: what the Raft log's appends of a heavy write load cost the process that
// makes them (issue #30/#34): WalStorage.append of --batch entries of --value bytes each (a leader's
// Ready under 64 writers of 4 KiB values), --n times, through the pool as such records go. Reports
// the wall time per append, the process's CPU per append (user + system), and V8's collections
// (count and pause) over the run. --raft DIR takes packages/raft's build from another tree (an A/B
// against a worktree of an older commit: `git worktree add /tmp/old <rev> && (cd /tmp/old && npm ci
// && npx tsc -b packages/raft)`). The log lives in a temporary folder removed after.
//   node bench/storage/wal-append.js [--n 2000] [--batch 64] [--value 4096] [--raft packages/raft]
'use strict';
const { mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const { join, resolve } = require('node:path');
const { performance } = require('node:perf_hooks');
const { randomBytes } = require('node:crypto');
const { argOf, gcMeter } = require('../support');

const N = Number(argOf('--n', '2000'));
const BATCH = Number(argOf('--batch', '64'));
const VALUE = Number(argOf('--value', '4096'));
const RAFT = resolve(argOf('--raft', join(__dirname, '..', '..', 'packages', 'raft')));
const { WalStorage, LevelStorage } = require(join(RAFT, 'dist', 'index.js'));

async function main() {
  const dir = mkdtempSync(join(os.tmpdir(), 'wal-append-'));
  const storage = new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'db') }), segmentBytes: 64 << 20 });
  try {
    await storage.load();
    const values = Array.from({ length: 16 }, () => randomBytes(VALUE));
    let index = 0;
    const batch = () => Array.from({ length: BATCH }, () => ({ index: ++index, term: 1, type: 0, data: values[index % values.length] }));
    for (let i = 0; i < 50; i++) await storage.append({ term: 1, vote: null, commit: index }, batch()); // warm-up
    const gc = gcMeter();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await storage.append(undefined, batch());
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const gcs = await gc.read();
    gc.stop();
    const mib = (N * BATCH * VALUE) / 2 ** 20;
    console.log(
      `raft=${RAFT} n=${N} batch=${BATCH} value=${VALUE}: ${(wallMs / N).toFixed(3)} ms/append wall, ` +
        `${((cpu.user + cpu.system) / 1000 / N).toFixed(3)} ms/append CPU (user ${(cpu.user / 1000).toFixed(0)} ms, system ${(cpu.system / 1000).toFixed(0)} ms), ` +
        `${(mib / (wallMs / 1000)).toFixed(0)} MiB/s, ${gcs.text}`,
    );
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
