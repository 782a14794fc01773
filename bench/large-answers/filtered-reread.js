#!/usr/bin/env node
// bench/large-answers/filtered-reread.js (issue #16): what a read of catalog/service, a filtered
// health/service or health/state costs once its listing exists, right after one write — the
// common case of a watched service. In process, plain calls on a store of N nodes (one instance of
// `web`, tagged, with a check; 1 in 10 critical), each read timed (wall, with the load) over
// --rounds rounds, one write between rounds. Before issue #16's second pass each of these selected,
// sorted and shaped every row per read; now they follow the changed nodes (catalog/node-rows.ts).
//
//   npx tsc -b packages/cli && node bench/large-answers/filtered-reread.js [--size 100000] [--rounds 3]
'use strict';
const { performance } = require('node:perf_hooks');
const { loadavg } = require('node:os');
const { Store } = require('../../packages/store/dist');

const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const SIZE = Number(arg('--size', '100000'));
const ROUNDS = Number(arg('--rounds', '3'));

const store = new Store({ datacenter: 'dc1' });
let index = 1;
for (let i = 0; i < SIZE; i++) {
  store.apply(index++, {
    type: 'catalog.register',
    req: {
      Node: `node-${String(i).padStart(6, '0')}`,
      Address: '10.0.0.1',
      NodeMeta: { rack: `r${i % 16}` },
      Service: { ID: 'web-1', Service: 'web', Port: 8080, Tags: ['v1'] },
      Check: { CheckID: 'web-alive', Name: 'web alive', Status: i % 10 ? 'passing' : 'critical', ServiceID: 'web-1', Output: 'ok' },
    },
  });
}
const READS = {
  'catalog-service': () => store.catalogService('web'),
  'catalog-service-tag': () => store.catalogService('web', { tags: ['v1'] }),
  'health-service-tag': () => store.healthService('web', { tags: ['v1'] }),
  'health-service-meta': () => store.healthService('web', { nodeMeta: { rack: 'r1' } }),
  'health-state-passing': () => store.healthState('passing'),
  'health-state-any-meta': () => store.healthState('any', { nodeMeta: { rack: 'r1' } }),
};
for (let round = 0; round <= ROUNDS; round++) {
  for (const [kind, read] of Object.entries(READS)) {
    const t0 = performance.now();
    const rows = read().value.length;
    const ms = performance.now() - t0;
    // Round 0 is the first read (the listing built in one go: a plain call cannot wait).
    console.log(`REREAD ${kind} size=${SIZE} round=${round}${round === 0 ? ' (first read)' : ' (after one write)'} rows=${rows} read=${ms.toFixed(1)} ms load=${loadavg()[0].toFixed(1)}`);
  }
  store.apply(index++, {
    type: 'catalog.register',
    req: { Node: `node-${String(round * 7).padStart(6, '0')}`, Address: '10.0.0.2', Service: { ID: 'web-1', Service: 'web', Port: 8081 + round, Tags: ['v1'] } },
  });
}
