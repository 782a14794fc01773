#!/usr/bin/env node
// What touching new memory costs this machine (issue #34): a 32 MiB file read into a fresh buffer
// and checksummed, four times (a restore's arena: readRange + crc32 in file-snapshots.ts), then the
// same read and checksum into one reused buffer, then 256 MiB allocated and filled. Run it twice —
// as is and with glibc's huge-page tunable, as the entry point sets it — to see what the tunable
// saves here:
//   node bench/memory/first-touch.js
//   GLIBC_TUNABLES=glibc.malloc.hugetlb=1 node bench/memory/first-touch.js
'use strict';
const { crc32 } = require('node:zlib');
const { closeSync, openSync, readFileSync, readSync, rmSync, writeFileSync } = require('node:fs');
const { randomBytes } = require('node:crypto');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const MIB = 2 ** 20;
const ms = (t0) => (Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1);
const file = join(tmpdir(), `first-touch-${process.pid}`);
writeFileSync(file, randomBytes(32 * MIB));
const fd = openSync(file, 'r');
try {
  const readAndSum = (b) => {
    let t = process.hrtime.bigint();
    readSync(fd, b, 0, b.length, 0);
    const read = ms(t);
    t = process.hrtime.bigint();
    crc32(b);
    return `read ${read} ms, crc32 ${ms(t)} ms`;
  };
  const kept = [];
  for (let i = 0; i < 4; i++) {
    const b = Buffer.allocUnsafe(32 * MIB);
    kept.push(b);
    console.log(`fresh 32 MiB:  ${readAndSum(b)}`);
  }
  const reused = Buffer.allocUnsafe(32 * MIB);
  readAndSum(reused);
  for (let i = 0; i < 2; i++) console.log(`reused 32 MiB: ${readAndSum(reused)}`);
  const t = process.hrtime.bigint();
  Buffer.alloc(256 * MIB).fill(1);
  console.log(`256 MiB allocated and filled: ${ms(t)} ms`);
  const huge = /AnonHugePages:\s+(\d+) kB/.exec(readFileSync('/proc/self/smaps_rollup', 'utf8'));
  console.log(`GLIBC_TUNABLES=${process.env.GLIBC_TUNABLES ?? ''}; anonymous huge pages ${huge ? Math.round(Number(huge[1]) / 1024) : '?'} MiB; THP ${readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8').trim()}`);
} finally {
  closeSync(fd);
  rmSync(file, { force: true });
}
