#!/usr/bin/env node
// What a new leader's client-liveness duty costs at start on a large catalog (issue #14, found by
// bench/catalog-scale: a 100,000-node cluster lost leader after leader). In process, on the built
// store and duty: N nodes with one service and one check each (run.js's shape), then
// ClientLiveness.start() three times, and the store reads it is made of, each over every node.
//
//   npm run build && node bench/catalog-scale/leader-scan.js [N=100000]
// (REGISTRY_ROOT=DIR measures another checkout's built packages.)
'use strict';
const { join } = require('node:path');
const { loadavg } = require('node:os');

const ROOT = process.env.REGISTRY_ROOT || join(__dirname, '..', '..');
const { Store } = require(join(ROOT, 'packages/store/dist'));
const { ClientLiveness } = require(join(ROOT, 'packages/server/dist/cluster/client-liveness'));

const N = Number(process.argv[2] || 100000);
const store = new Store({ datacenter: 'dc1' });
let index = 1;
for (let i = 0; i < N; i++) {
  const svc = i < 1000 ? 'big' : `app-${i % 1000}`;
  store.apply(index++, { type: 'catalog.register', req: { Node: `node-${i}`, Address: '10.0.0.1', Service: { ID: svc, Service: svc, Port: 1 }, Check: { CheckID: `${svc}-alive`, Name: 'alive', Status: 'passing', ServiceID: svc } } });
}
const cpuMs = (fn) => {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const c = process.cpuUsage(c0);
  return `${(performance.now() - t0).toFixed(0)} ms wall, ${((c.user + c.system) / 1000).toFixed(0)} ms cpu`;
};
const logger = { info() {}, warn() {}, debug() {} };
const duty = new ClientLiveness({ store, leaderCalls: { handle() {} }, apply: async () => {}, timeoutMs: 10_000, logger });
for (let r = 0; r < 3; r++) {
  console.log(`N=${N} ClientLiveness.start(): ${cpuMs(() => duty.start())} load=${loadavg()[0].toFixed(1)}`);
  duty.stop();
}
console.log(`catalogNodes(): ${cpuMs(() => store.catalogNodes())}`);
console.log(`healthState('any'): ${cpuMs(() => store.healthState('any'))}`);
console.log(`catalogNode() × ${N}: ${cpuMs(() => { for (let i = 0; i < N; i++) store.catalogNode(`node-${i}`); })}`);
console.log(`healthNode() × ${N}: ${cpuMs(() => { for (let i = 0; i < N; i++) store.healthNode(`node-${i}`); })}`);
