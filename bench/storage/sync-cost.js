#!/usr/bin/env node
// bench/storage/sync-cost: what one durable append of a small record costs on this disk, by way of
// writing it — LevelDB's synced batch (how the Raft log is written: packages/raft LevelStorage) against
// a plain file with write + fdatasync, growing or preallocated, on the main thread or libuv's pool,
// or opened O_DSYNC. --procs N runs N processes at once per way, as the three servers of a cluster
// sync at the same moment at one client.
//   node bench/storage/sync-cost.js [--n 2000] [--procs 1] [--ways level,grow,growasync,preasync,dsync,predsync] [--dir /tmp]
// Prints one line per process: way, p50/p90/p99/max in ms. Files live in a temporary folder removed after.
'use strict';
const fs = require('node:fs');
const { fork } = require('node:child_process');
const { join } = require('node:path');
const { tmpdir } = require('node:os');

const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);

if (process.argv[2] === '--child') {
  child(process.argv[3], Number(process.argv[4]), process.argv[5]).then(() => process.exit(0), (err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main();
}

async function main() {
  const n = Number(arg('--n', '2000'));
  const procs = Number(arg('--procs', '1'));
  const ways = arg('--ways', 'level,grow,growasync,preasync,dsync,predsync').split(',');
  const dir = fs.mkdtempSync(join(arg('--dir', tmpdir()), 'sync-cost-'));
  try {
    for (const way of ways) {
      const runs = Array.from({ length: procs }, () => new Promise((resolve) => fork(__filename, ['--child', way, String(n), dir]).on('exit', resolve)));
      await Promise.all(runs);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function child(way, n, dir) {
  const record = Buffer.alloc(300, 7);
  const file = join(dir, `${way}-${process.pid}`);
  const took = [];
  const timed = async (write) => {
    for (let i = 0; i < n; i++) {
      const t = process.hrtime.bigint();
      await write(i);
      took.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  };
  const preallocate = (fd) => {
    const zeros = Buffer.alloc(1 << 20);
    for (let i = 0; i < Math.ceil((n * record.length) / zeros.length) + 1; i++) fs.writeSync(fd, zeros);
    fs.fsyncSync(fd);
  };
  const cb = (run) => new Promise((resolve, reject) => run((err) => (err ? reject(err) : resolve())));
  if (way === 'level') {
    const { Level } = require(join(__dirname, '..', '..', 'node_modules', 'level'));
    const db = new Level(file, { valueEncoding: 'view' });
    await db.open();
    await timed((i) => db.batch([{ type: 'put', key: `blk!${String(i).padStart(14, '0')}`, value: record }], { sync: true }));
    await db.close();
  } else if (way === 'dsync' || way === 'predsync') {
    if (way === 'predsync') {
      const fd0 = fs.openSync(file, 'w');
      preallocate(fd0);
      fs.closeSync(fd0);
    }
    const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_DSYNC);
    await timed((i) => cb((done) => fs.write(fd, record, 0, record.length, i * record.length, done)));
    fs.closeSync(fd);
  } else {
    const fd = fs.openSync(file, 'w');
    if (way.startsWith('pre')) preallocate(fd);
    const sync = way.endsWith('async')
      ? (i) => cb((done) => fs.write(fd, record, 0, record.length, i * record.length, done)).then(() => cb((done) => fs.fdatasync(fd, done)))
      : async (i) => {
          fs.writeSync(fd, record, 0, record.length, i * record.length);
          fs.fdatasyncSync(fd);
        };
    if (!['grow', 'growasync', 'prealloc', 'preasync'].includes(way)) throw new Error(`unknown way ${way}`);
    await timed(sync);
    fs.closeSync(fd);
  }
  took.sort((a, b) => a - b);
  const q = (p) => took[Math.floor(p * (took.length - 1))].toFixed(3);
  console.log(`${way.padEnd(9)} n=${n} p50=${q(0.5)} p90=${q(0.9)} p99=${q(0.99)} max=${q(1)} ms`);
}
