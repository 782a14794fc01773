#!/usr/bin/env node
// bench/raft-throughput/frame-encode: what encoding a leader's append frames costs (issue #30/#34):
// FrameEncoder.encode of --n append-shaped messages of --batch entries of --value bytes, each entry's
// payload a distinct slice of a large buffer (as a leader's proposals are). Reports CPU per frame and
// V8's collections (count and pause). --raft DIR takes packages/raft's build from another tree (an
// A/B, as bench/storage/wal-append.js).
//   node bench/raft-throughput/frame-encode.js [--n 4000] [--batch 64] [--value 4096] [--raft packages/raft]
'use strict';
const { join, resolve } = require('node:path');
const { randomBytes } = require('node:crypto');
const { argOf, gcMeter } = require('../support');

const N = Number(argOf('--n', '4000'));
const BATCH = Number(argOf('--batch', '64'));
const VALUE = Number(argOf('--value', '4096'));
const RAFT = resolve(argOf('--raft', join(__dirname, '..', '..', 'packages', 'raft')));
const { FrameEncoder } = require(join(RAFT, 'dist', 'transport', 'frame-codec.js'));

const encoder = new FrameEncoder();
const pool = randomBytes(64 << 20);
let at = 0;
function entry(index) {
  const data = pool.subarray(at, at + VALUE);
  at = (at + VALUE) % (pool.length - VALUE);
  return { index, term: 1, type: 0, data };
}
const message = (i) => [1, i, { type: 'append', term: 1, prevIndex: i * BATCH, prevTerm: 1, entries: Array.from({ length: BATCH }, (_, j) => entry(i * BATCH + j + 1)), commit: i * BATCH }];

async function main() {
  for (let i = 0; i < 200; i++) encoder.encode(message(i)); // warm-up
  const gc = gcMeter();
  const cpu0 = process.cpuUsage();
  let bytes = 0;
  for (let i = 0; i < N; i++) bytes += encoder.encode(message(i)).length;
  const cpu = process.cpuUsage(cpu0);
  const gcs = await gc.read();
  gc.stop();
  const perFrame = (cpu.user + cpu.system) / 1000 / N;
  console.log(`raft=${RAFT} n=${N} batch=${BATCH} value=${VALUE}: ${perFrame.toFixed(3)} ms/frame CPU, ${(bytes / N / 1024).toFixed(0)} KiB/frame, ${gcs.text}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
