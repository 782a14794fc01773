#!/usr/bin/env -S node --v8-pool-size=0
// The Node flags on the line above are the ones `registry` is meant to run with; everything that
// starts a server reads them from here (Dockerfile, scripts/cluster.sh, the test harnesses).
// --v8-pool-size=0: V8's helper threads (parallel scavenges and marking, concurrent compiling) sized
// to the machine (one fewer than its cores) instead of Node's fixed 4. With four, a collection's main
// thread waits for helpers that are themselves waiting for a core on a busy machine: on 2 cores, three
// servers' write p99 at one client was 7.7-9.5 ms with four helpers, 4.3-4.8 ms with one
// (docs/benchmarks.md, "V8's helper threads"; issue #30).
'use strict';
require('../dist/main.js').main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`registry: ${err && err.message ? err.message : err}\n`);
  process.exit(1);
});
