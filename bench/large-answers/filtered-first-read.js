#!/usr/bin/env node
// bench/large-answers/filtered-first-read.js (issue #16): first-read.js's harness (first-read-harness.js; read it for how
// the figures are taken) for the reads issue #16's second pass made kept and stepped
// (catalog/kept-reads.ts): catalog/service, tag- and node-meta-filtered health/service, and
// health/state — each the first read after a restore of the snapshot (fresh tables), one-go (a
// plain call: the build runs in one go, what every such read did before, and still does for
// callers that cannot wait) against steps (the read as the RPC layer runs it, rpc/settled-read.ts).
//
//   npx tsc -b packages/cli && node bench/large-answers/filtered-first-read.js [--size 100000] [--rounds 3]
'use strict';
// The store, the probes and the rounds: first-read-harness.js.
const { runFirstReads } = require('./first-read-harness');

/** Rows each read answers at least, per node (the node-meta filter keeps one rack in 16). */
const MIN_ROWS = { 'catalog-service': 1, 'health-service-tag': 1, 'health-service-meta': 1 / 16, 'health-state-passing': 1 };

runFirstReads({
  label: 'FILTERED-FIRST-READ',
  kv: false,
  minRows: (kind) => MIN_ROWS[kind],
  reads: {
    'catalog-service': (s) => s.catalogService('web'),
    'health-service-tag': (s) => s.healthService('web', { tags: ['v1'] }),
    'health-service-meta': (s) => s.healthService('web', { nodeMeta: { rack: 'r3' } }),
    'health-state-passing': (s) => s.healthState('passing'),
  },
});
