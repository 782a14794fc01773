#!/usr/bin/env node
// bench/large-answers/election-stall.js (issue #16): how long a new leader's client-liveness duty
// holds the event loop when it takes office over a large catalog. In process: a store holding N
// catalog nodes (each with a service and a check, no serfHealth) beside C client agents' nodes
// (serfHealth) and 3 servers; after each restore of its snapshot (fresh tables: nothing kept, as
// after a start or an install-snapshot), the duty's start() with a 10 ms timer ("ping") beside it.
// Two ways, alternated round by round (A/B on the same build and the same restored state):
//   walk  — what start() did before: the node listing (built in one go) and isClientNode per node;
//   index — start() now: the clients found through the store's check ID index (serfHealth).
// Printed per round: the longest ping stall (wall), the main thread's CPU for the call (Linux
// schedstat: holds up on a loaded machine), the clients found, and the load.
//
//   npx tsc -b packages/cli && node bench/large-answers/election-stall.js [--size 100000] [--clients 100] [--rounds 4]
'use strict';
const { performance } = require('node:perf_hooks');
const { loadavg } = require('node:os');
const v8 = require('node:v8');
const vm = require('node:vm');
const { Store } = require('../../packages/store/dist');
const { mainThreadCpuMs } = require('./first-read-harness');
const { ClientLiveness, isClientNode } = require('../../packages/server/dist/cluster/client-liveness');
const { createLogger } = require('../../packages/server/dist/agent/logger');

const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const SIZE = Number(arg('--size', '100000'));
const CLIENTS = Number(arg('--clients', '100'));
const ROUNDS = Number(arg('--rounds', '4'));

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

function load() {
  const store = new Store({ datacenter: 'dc1' });
  let index = 1;
  const serf = (status) => ({ CheckID: 'serfHealth', Name: 'Serf Health Status', Status: status, ServiceID: '' });
  for (let i = 0; i < SIZE; i++) {
    store.apply(index++, {
      type: 'catalog.register',
      req: {
        Node: `node-${String(i).padStart(6, '0')}`,
        Address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`,
        Service: { ID: 'web-1', Service: 'web', Port: 8080, Tags: ['v1'] },
        Check: { CheckID: 'web-alive', Name: 'web alive', Status: 'passing', ServiceID: 'web-1' },
      },
    });
  }
  for (let i = 0; i < CLIENTS; i++) {
    store.apply(index++, { type: 'catalog.register', req: { Node: `client-${i}`, Address: `192.168.${i >> 8}.${i & 255}`, Check: serf('passing') } });
  }
  for (let i = 0; i < 3; i++) {
    store.apply(index++, {
      type: 'catalog.register',
      req: { Node: `server-${i}`, Address: `172.16.0.${i}`, Service: { ID: 'registry', Service: 'registry', Port: 8300 }, Check: serf('passing') },
    });
  }
  return store;
}

/** start() as it was before issue #16's fix: every catalog node looked at. */
function walkStart(store) {
  const seen = new Map();
  for (const n of store.catalogNodes().value) {
    if (!isClientNode(store, n.Node)) continue;
    seen.set(n.Node, { id: n.ID ?? '', node: n.Node, address: n.Address });
  }
  return seen.size;
}

function indexStart(store) {
  const handlers = new Map();
  const duty = new ClientLiveness({
    store,
    leaderCalls: { handle: (m, f) => handlers.set(m, f), call: () => Promise.reject(new Error('none')) },
    apply: async () => undefined,
    timeoutMs: 60_000,
    logger: createLogger('err', false),
  });
  duty.start();
  const found = duty.seen.size;
  duty.stop();
  return found;
}

async function measured(call) {
  let last = performance.now();
  let worst = 0;
  const ping = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 10);
    last = now;
  }, 10);
  await new Promise((r) => setTimeout(r, 25));
  last = performance.now();
  worst = 0;
  const cpu0 = mainThreadCpuMs();
  const found = call();
  const cpuMs = mainThreadCpuMs() - cpu0;
  await new Promise((r) => setTimeout(r, 15));
  clearInterval(ping);
  return { found, cpuMs, stallMs: Math.max(0, worst) };
}

(async () => {
  const t0 = performance.now();
  const store = load();
  const snapshot = store.snapshot();
  console.log(`LOADED size=${SIZE} clients=${CLIENTS} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const results = { walk: [], index: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? ['walk', 'index'] : ['index', 'walk']) {
      store.restore(snapshot);
      gc();
      const r = await measured(() => (mode === 'walk' ? walkStart(store) : indexStart(store)));
      if (r.found !== CLIENTS) throw new Error(`${mode}: found ${r.found} clients, expected ${CLIENTS}`);
      results[mode].push(r);
      console.log(
        `ELECTION mode=${mode} size=${SIZE} clients=${CLIENTS} round=${round} longest-stall=${r.stallMs.toFixed(1)} ms main-thread-cpu=${r.cpuMs.toFixed(1)} ms load=${loadavg()[0].toFixed(1)}`,
      );
    }
  }
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const line = ['walk', 'index']
    .map((m) => `${m}: stall median ${median(results[m].map((r) => r.stallMs)).toFixed(1)} ms, cpu median ${median(results[m].map((r) => r.cpuMs)).toFixed(1)} ms`)
    .join(' | ');
  console.log(`SUMMARY election size=${SIZE} clients=${CLIENTS} rounds=${ROUNDS} ${line} load=${loadavg()[0].toFixed(1)}`);
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
