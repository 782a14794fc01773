// The dedup window's own cost in one process: recording 100,000 requests a round (full window,
// evicting from the second round on) and encoding a full window as a snapshot does.
//   npx tsc -b packages/store && node bench/window/run.js
'use strict';
const { performance } = require('node:perf_hooks');
const { RequestTable } = require('../../packages/store/dist/requests/request-table');
const { Fields, encodeSteps } = require('../../packages/store/dist/snapshot-stream');

const ROUND = 100_000;
const ids = [];
for (let i = 0; i < 5 * ROUND; i++) ids.push(Buffer.from(`AbCdEfGh.${(i + 1).toString(36)}`).toString());
const table = new RequestTable();
const record = [];
for (let round = 0; round < 5; round++) {
  const a = performance.now();
  for (let i = 0; i < ROUND; i++) {
    const idx = round * ROUND + i + 1;
    table.record({ id: ids[idx - 1], at: 1e12 + idx }, idx, true);
  }
  record.push(performance.now() - a);
}
const encode = [];
let bytes = 0;
for (let k = 0; k < 15; k++) {
  const a = performance.now();
  const steps = encodeSteps(new Fields([['requests', table.capture()]]));
  let r;
  while (!(r = steps.next()).done);
  bytes = r.value.length;
  encode.push(performance.now() - a);
}
const min = (xs) => Math.min(...xs).toFixed(1);
console.log(`record ${ROUND} requests: min ${min(record)} ms (µs each: ${(Math.min(...record) * 1000 / ROUND).toFixed(2)})`);
console.log(`encode a full window (${table.size} requests, ${bytes} bytes): min ${min(encode)} ms`);
