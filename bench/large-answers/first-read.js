#!/usr/bin/env node
// bench/large-answers/first-read.js (issue #16): how long the FIRST read of a large listing —
// after a start or a snapshot restore, nothing kept yet — holds the event loop. In process, on the
// store and the server's RPC helper: a store holding N nodes (each with one instance of `web` and
// one service check) and N keys under `app/`, then, after each restore of its snapshot (fresh
// tables, so fresh listings), the first read of each kind while a 10 ms interval timer ("ping")
// runs beside it:
//   nodes  — store.catalogNodes()              (GET /v1/catalog/nodes)
//   health — store.healthService('web')        (GET /v1/health/service/web)
//   kv     — store.kvRecurse('app/')           (GET /v1/kv/app/?recurse)
// Two ways, alternated round by round (A/B on the same build and the same restored state):
//   one-go — the read as a plain call: the build runs in one go (what every read did before);
//   steps  — the read as the RPC layer runs it (rpc/settled-read.ts): the build runs in steps of
//            ≤ 2 ms that take turns in the large answers' lane (http/sliced-json.ts installs it).
// Printed per read: the longest ping stall (how late the 10 ms timer fired: the longest the loop
// was held, wall), the most main-thread CPU one turn of the event loop used (the same in CPU,
// which holds up on a loaded machine; Linux schedstat), the read's wall time and the process CPU it used, and the load.
//
//   npm run build && node bench/large-answers/first-read.js [--size 100000] [--rounds 3]
'use strict';
// The store, the probes and the rounds: first-read-harness.js.
const { runFirstReads } = require('./first-read-harness');

runFirstReads({
  label: 'FIRST-READ',
  kv: true,
  // Every node shows in each listing, and every key.
  minRows: () => 1,
  reads: {
    nodes: (s) => s.catalogNodes(),
    health: (s) => s.healthService('web'),
    kv: (s) => s.kvRecurse('app/'),
  },
});
