// Preload (`BENCH_CLUSTER_NODE_OPTIONS="-r $PWD/bench/cluster/gc-trace.js"`): V8 prints one line per
// collection into each server's log (--trace-gc-nvp: the pause and every phase of it, e.g. a
// mark-compact's mark.full_closure_parallel, the atomic pause's marking, or incremental_longest_step,
// the longest marking step the main thread took between pauses). V8's flags are refused in
// NODE_OPTIONS; set at start-up here, before the first collection, they apply to all that follow.
// Read with bench/bigstate/gc-summary.js.
'use strict';
// Only the servers: cluster.sh also runs short node helpers with the same NODE_OPTIONS.
if (process.argv[2] === 'agent') require('node:v8').setFlagsFromString('--trace-gc-nvp');
