// Preloaded into an agent (NODE_OPTIONS=--require …/report.js) by at-rest.sh: on SIGUSR2 it appends
// the process's memory as one JSON line to $MEMORY_REPORT — RSS and its anonymous/file parts, V8's
// heap used/committed and each space's, external and array buffers, compiled code, the modules
// loaded — as the process holds it ("asIs") and, when the agent runs with --expose-gc, again after a
// full GC ("afterGc": what is live, not garbage not yet collected).
'use strict';
const { appendFileSync, readFileSync } = require('node:fs');
const v8 = require('node:v8');

const out = process.env.MEMORY_REPORT;
const MiB = (n) => Math.round((n / 1048576) * 10) / 10;

function status(key) {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? MiB(Number(m[1]) * 1024) : undefined;
}

function snapshot() {
  const m = process.memoryUsage();
  const code = v8.getHeapCodeStatistics();
  return {
    rss: status('VmRSS'),
    rssAnon: status('RssAnon'),
    rssFile: status('RssFile'),
    heapUsed: MiB(m.heapUsed),
    heapTotal: MiB(m.heapTotal),
    external: MiB(m.external),
    arrayBuffers: MiB(m.arrayBuffers),
    code: MiB(code.code_and_metadata_size + code.bytecode_and_metadata_size),
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, [MiB(s.space_used_size), MiB(s.space_size)]])),
  };
}

if (out) {
  process.on('SIGUSR2', () => {
    const asIs = snapshot();
    let afterGc;
    if (typeof global.gc === 'function') {
      global.gc();
      afterGc = snapshot();
    }
    const modules = Object.keys(require.cache);
    const line = {
      pid: process.pid,
      asIs,
      afterGc,
      heapLimit: MiB(v8.getHeapStatistics().heap_size_limit),
      threads: Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]),
      modules: modules.length,
      nodeModules: modules.filter((p) => p.includes('/node_modules/')).length,
    };
    appendFileSync(out, JSON.stringify(line) + '\n');
  });
}
