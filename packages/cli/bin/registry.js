#!/usr/bin/env -S GLIBC_TUNABLES=glibc.malloc.hugetlb=1 node --v8-pool-size=0
// The environment and Node flags on the line above are the ones `registry` is meant to run with;
// everything that starts a server reads them from here (Dockerfile, scripts/cluster.sh, the test
// harnesses).
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1: glibc's malloc asks for transparent huge pages
// (madvise MADV_HUGEPAGE) on the large blocks it maps — the ArrayBuffers that hold KV values, a
// restore's 32 MiB arenas, snapshot pieces — so the kernel maps them 2 MiB at a time instead of
// 4 KiB, where the system's THP setting is `madvise` (Debian's and Ubuntu's default) or `always`.
// Touching fresh memory a page at a time is what a large state's load, restart and catch-up paid
// for most on a VM: at 1 GiB a follower restart went 11.9 -> 3.0 s, a wiped follower 14.7 -> 4.9 s
// and the load 2,189 -> 3,265 writes/s (docs/benchmarks.md, "A large state"); an idle agent's RSS
// is unchanged. glibc before 2.35 and other C libraries ignore it.
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
