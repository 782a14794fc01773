// Preloaded into an agent (NODE_OPTIONS=--require …/report.js) by at-rest.sh: on SIGUSR2 it appends
// the process's memory as one JSON line to $MEMORY_REPORT — RSS and its anonymous/file parts, V8's
// heap used/committed and each space's, external and array buffers, compiled code, glibc malloc's
// resident arenas (read once, last), the modules loaded — as the process holds it ("asIs") and, when the agent runs
// with --expose-gc, again after a full GC ("afterGc": what is live, not garbage not yet collected).
'use strict';
const { appendFileSync, readFileSync } = require('node:fs');
const v8 = require('node:v8');

const out = process.env.MEMORY_REPORT;
const MiB = (n) => Math.round((n / 1048576) * 10) / 10;

function status(key) {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? MiB(Number(m[1]) * 1024) : undefined;
}

/**
 * Resident anonymous memory that glibc's malloc holds, from /proc/self/smaps: the main arena (the
 * `[heap]` mapping, grown by brk) and the other threads' arenas (each a 64 MiB-aligned reservation of
 * which only the touched part is resident). V8's heap pages and most large Buffers are separate
 * mmaps and count in neither.
 */
function mallocArenas() {
  const ARENA = 64 * 1048576;
  const maps = [];
  let cur = null;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (m) {
      cur = { from: parseInt(m[1], 16), to: parseInt(m[2], 16), perm: m[3], inode: m[4], name: m[5].trim(), rss: 0 };
      maps.push(cur);
    } else if (cur && line.startsWith('Rss:')) cur.rss = Number(line.split(/\s+/)[1]) * 1024;
  }
  let brk = 0;
  let threads = 0;
  maps.forEach((mp, i) => {
    if (mp.name === '[heap]') brk += mp.rss;
    else if (mp.inode === '0' && mp.name === '' && mp.from % ARENA === 0) {
      const next = maps[i + 1];
      const span = next && next.from === mp.to && next.perm.startsWith('---') ? next.to - mp.from : mp.to - mp.from;
      if (span === ARENA) threads += mp.rss;
    }
  });
  return { brk: MiB(brk), threadArenas: MiB(threads) };
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
    // Both readings before parsing /proc/self/smaps: that loop is hot enough for V8 to optimize it,
    // and an agent at rest has not paged the optimizing compiler in yet (issue #30), so parsing first
    // would add the compiler's pages to the "after GC" figures.
    const asIs = snapshot();
    let afterGc;
    if (typeof global.gc === 'function') {
      global.gc();
      afterGc = snapshot();
    }
    // Read once, last (after the GC when there is one).
    asIs.malloc = mallocArenas();
    if (afterGc) afterGc.malloc = asIs.malloc;
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
