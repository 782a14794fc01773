#!/usr/bin/env node
// What keeping a /v1/txn result in the request window costs per apply: a 63-op catalog transaction
// (run.js's shape) applied stamped — recorded in the window — and unstamped, alternating, on one
// store each; the difference is what recording costs (since the window keeps object results as
// msgpack bytes, their encoding).
//
//   npm run build && node bench/catalog-scale/txn-apply-cost.js [txns=3000]
'use strict';
const { join } = require('node:path');
const ROOT = process.env.REGISTRY_ROOT || join(__dirname, '..', '..');
const { Store } = require(join(ROOT, 'packages/store/dist'));

const TXNS = Number(process.argv[2] || 3000);
const ops = (first) => {
  const out = [];
  for (let i = first; i < first + 21; i++) {
    const svc = `app-${i % 1000}`;
    out.push({ Node: { Verb: 'set', Node: { Node: `node-${i}`, Address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, Meta: { rack: `r${i % 16}` } } } });
    out.push({ Service: { Verb: 'set', Node: `node-${i}`, Service: { ID: svc, Service: svc, Port: 8080, Tags: ['v1'] } } });
    out.push({ Check: { Verb: 'set', Check: { Node: `node-${i}`, CheckID: `${svc}-alive`, Name: `${svc} alive`, Status: 'passing', ServiceID: svc, Output: 'HTTP GET /health: 200 OK' } } });
  }
  return out;
};
const stores = { stamped: new Store({ datacenter: 'dc1' }), bare: new Store({ datacenter: 'dc1' }) };
const ns = { stamped: [], bare: [] };
const at = Date.now();
for (let t = 1; t <= TXNS; t++) {
  for (const kind of t % 2 ? ['stamped', 'bare'] : ['bare', 'stamped']) {
    const cmd = { type: 'txn', ops: ops(t * 21) };
    const start = process.hrtime.bigint();
    stores[kind].apply(t, cmd, kind === 'stamped' ? { id: `bench.${t.toString(36)}`, at } : undefined);
    ns[kind].push(Number(process.hrtime.bigint() - start));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const last = (xs) => xs.slice(xs.length >> 1); // after warm-up
const m = { stamped: median(last(ns.stamped)) / 1000, bare: median(last(ns.bare)) / 1000 };
console.log(`${TXNS} txns of 63 ops, median apply of the second half: stamped ${m.stamped.toFixed(0)} µs, bare ${m.bare.toFixed(0)} µs, recording ${(m.stamped - m.bare).toFixed(0)} µs`);
