#!/usr/bin/env node
// How much of a server's heap at N catalog nodes is the store itself (issue #14: the 100,000-node
// server runs a 600–760 MB heap, and the event-loop stalls left there are its collections). In
// process, on the built store: N nodes with one service and one check each (run.js's shape), the
// heap after a full GC before and after, then what the first listings a server builds keep. With
// `txn`, the nodes are loaded as run.js loads them — /v1/txn commands of 21 nodes (63 ops), each
// stamped with a request id as the leader stamps it — so the request window's kept results count.
//
//   npm run build && node --expose-gc bench/catalog-scale/store-heap.js [N=100000] [txn]
'use strict';
const { join } = require('node:path');

if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
const ROOT = process.env.REGISTRY_ROOT || join(__dirname, '..', '..');
const { Store } = require(join(ROOT, 'packages/store/dist'));

const N = Number(process.argv[2] || 100000);
const heapMiB = () => {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};
const externalMiB = () => process.memoryUsage().arrayBuffers / 2 ** 20;
const started = Date.now();
const before = heapMiB();
const store = new Store({ datacenter: 'dc1' });
const VIA_TXN = process.argv[3] === 'txn';
const NODES_PER_TXN = 21;
let index = 1;
if (VIA_TXN) {
  const at = Date.now();
  for (let first = 0; first < N; first += NODES_PER_TXN) {
    const ops = [];
    for (let i = first; i < Math.min(first + NODES_PER_TXN, N); i++) {
      const svc = i < 1000 ? 'big' : `app-${i % 1000}`;
      ops.push({ Node: { Verb: 'set', Node: { Node: `node-${i}`, Address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, Meta: { rack: `r${i % 16}` } } } });
      ops.push({ Service: { Verb: 'set', Node: `node-${i}`, Service: { ID: svc, Service: svc, Port: 8080, Tags: ['v1'] } } });
      ops.push({ Check: { Verb: 'set', Check: { Node: `node-${i}`, CheckID: `${svc}-alive`, Name: `${svc} alive`, Status: 'passing', ServiceID: svc, Output: 'HTTP GET /health: 200 OK' } } });
    }
    const result = store.apply(index, { type: 'txn', ops }, process.env.NO_STAMP ? undefined : { id: `bench.${index.toString(36)}`, at });
    if (!result || result.Errors) throw new Error(`txn at ${index}: ${JSON.stringify(result).slice(0, 200)}`);
    index++;
  }
} else {
  for (let i = 0; i < N; i++) {
    const svc = i < 1000 ? 'big' : `app-${i % 1000}`;
    store.apply(index++, { type: 'catalog.register', req: { Node: `node-${i}`, Address: '10.0.0.1', Service: { ID: svc, Service: svc, Port: 1 }, Check: { CheckID: `${svc}-alive`, Name: 'alive', Status: 'passing', ServiceID: svc } } });
  }
}
let last = heapMiB();
const loadMs = Date.now() - started;
console.log(`N=${N}${VIA_TXN ? ` via ${index - 1} txns` : ''} store: ${(last - before).toFixed(0)} MiB (${(((last - before) * 2 ** 20) / N).toFixed(0)} B per node), buffers ${externalMiB().toFixed(0)} MiB, loaded in ${loadMs} ms`);
const kept = (what, fn) => {
  fn();
  const now = heapMiB();
  console.log(`  + ${what}: ${(now - last).toFixed(0)} MiB kept`);
  last = now;
};
kept('catalogNodes()', () => store.catalogNodes());
kept("healthState('any')", () => store.healthState('any'));
kept("healthService('big')", () => store.healthService('big'));
