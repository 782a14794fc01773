// The dedup window's own cost in one process: recording 100,000 requests a round (full window,
// evicting from the second round on), what a full window costs the garbage collector (heap it
// retains; a full collection's time with it against without it), and encoding a full window as a
// snapshot does.
//   npx tsc -b packages/store && node --expose-gc bench/window/run.js [--repo <a worktree>]
// --repo measures another build (a worktree of an older commit, built) with this same script: each
// id is made afresh per request, as decoding an entry does, so a window that keeps id strings pays
// for keeping them. Times are CPU times of this process (process.cpuUsage), minimum of the rounds.
'use strict';
const { join } = require('node:path');
const at = process.argv.indexOf('--repo');
const repo = at >= 0 ? process.argv[at + 1] : join(__dirname, '..', '..');
const { RequestTable } = require(join(repo, 'packages/store/dist/requests/request-table'));
const { Fields, encodeSteps } = require(join(repo, 'packages/store/dist/snapshot-stream'));

const ROUND = 100_000;
const ROUNDS = 5;
const PREFIX = 'AbCdEfGh';
// Without --expose-gc the heap and GC figures are left out.
const gc = global.gc ?? (() => {});
/** CPU ms of this process since `from` (user + system). */
const cpuMs = (from) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1000;
};
const heapMb = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};
const fullGcMs = () => {
  const from = process.cpuUsage();
  for (let i = 0; i < 10; i++) gc();
  return cpuMs(from) / 10;
};

const emptyHeap = heapMb();
const emptyGc = fullGcMs();
const table = new RequestTable();
const record = [];
for (let round = 0; round < ROUNDS; round++) {
  const from = process.cpuUsage();
  for (let i = 0; i < ROUND; i++) {
    const idx = round * ROUND + i + 1;
    // A fresh, flat string each time, like msgpackr's decode of the entry's id.
    const id = `${PREFIX}.${idx.toString(36)}`;
    table.record({ id, at: 1e12 + idx }, idx, true);
  }
  record.push(cpuMs(from));
}
const fullHeap = heapMb();
const fullGc = fullGcMs();
const encode = [];
let bytes = 0;
for (let k = 0; k < 15; k++) {
  const from = process.cpuUsage();
  const steps = encodeSteps(new Fields([['requests', table.capture()]]));
  let r;
  while (!(r = steps.next()).done);
  bytes = r.value.length;
  encode.push(cpuMs(from));
}
const min = (xs) => Math.min(...xs).toFixed(1);
console.log(`build: ${repo}`);
console.log(`record ${ROUND} requests: min ${min(record)} ms CPU (µs each: ${((Math.min(...record) * 1000) / ROUND).toFixed(2)})`);
if (global.gc) console.log(`a full window (${table.size} requests) retains ${(fullHeap - emptyHeap).toFixed(1)} MB of JS heap; a full GC takes ${fullGc.toFixed(2)} ms with it, ${emptyGc.toFixed(2)} ms without`);
console.log(`encode a full window (${bytes} bytes): min ${min(encode)} ms CPU`);
