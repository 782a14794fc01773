// Does taking, sending or installing a large snapshot stall the event loop (issue #34: none ≥ 50 ms)?
// In one process, against the built packages/raft: a snapshot of --mib MiB is written into a storage
// sink in 1 MiB pieces from one reused buffer (taking), read back a piece at a time as a send does
// (sending), and written piece by piece into a second store's sink and committed with the whole log
// dropped, then read back as a restore does (installing), for LevelStorage and WalStorage. A 10 ms
// ping runs throughout. On a shared machine a late ping may only mean the loop waited for a CPU, so
// each gap is split with the main thread's schedstat: the ms it *ran* during the gap is what the
// snapshot code held the loop for; the ms it was runnable but waiting is the machine's load (the
// rest of a gap: the thread was blocked in the kernel, or the timer was simply late).
// For WalStorage, also a compaction: --log-mib MiB of log in 1 MiB segments, all removed by the commit
// of the snapshot that covers them (a leader's every snapshot does this).
// Usage: npx tsc -b packages/raft && node bench/bigstate/snapshot-file-stalls.js [--mib 256] [--log-mib 256]
'use strict';
const { mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const { join } = require('node:path');
const { LevelStorage, WalStorage } = require('../../packages/raft/dist/index.js');
const { argOf, mainThreadSchedMs } = require('../support');

const MIB = Number(argOf('--mib', '256'));
const LOG_MIB = Number(argOf('--log-mib', '256'));
const PING_MS = 10;
const meta = (index) => ({ index, term: 1, configuration: { servers: [{ id: 'a', address: '127.0.0.1:1' }] } });

function pinger() {
  let last = performance.now();
  let lastRun = mainThreadSchedMs().cpuMs;
  let lastWait = mainThreadSchedMs().waitMs;
  let worst = { gapMs: 0, ranMs: 0, waitedMs: 0 };
  let mostRan = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const { cpuMs: run, waitMs: wait } = mainThreadSchedMs();
    const gap = now - last - PING_MS;
    const ran = run - lastRun;
    if (gap > worst.gapMs) worst = { gapMs: gap, ranMs: ran, waitedMs: wait - lastWait };
    mostRan = Math.max(mostRan, ran);
    last = now;
    lastRun = run;
    lastWait = wait;
  }, PING_MS);
  return {
    take() {
      const r = { longestGapMs: worst.gapMs, ranInItMs: worst.ranMs, waitedInItMs: worst.waitedMs, mostRanInOneGapMs: mostRan };
      worst = { gapMs: 0, ranMs: 0, waitedMs: 0 };
      mostRan = 0;
      return r;
    },
    stop: () => clearInterval(timer),
  };
}

const fmt = (r) => `longest ping gap ${r.longestGapMs.toFixed(0)} ms (the loop ran ${r.ranInItMs.toFixed(0)} ms of it, waited for a CPU ${r.waitedInItMs.toFixed(0)} ms); most the loop ran between two pings ${r.mostRanInOneGapMs.toFixed(0)} ms`;

async function phase(name, ping, work) {
  ping.take();
  const t = performance.now();
  await work();
  console.log(`  ${name}: ${((performance.now() - t) / 1000).toFixed(2)} s; ${fmt(ping.take())}`);
}

async function run(kind, dir) {
  const make = (sub) => (kind === 'wal' ? new WalStorage({ dir: join(dir, sub, 'wal'), snapshots: new LevelStorage({ path: join(dir, sub, 'db') }) }) : new LevelStorage({ path: join(dir, sub, 'db') }));
  const leader = make('leader');
  const follower = make('follower');
  await leader.load();
  await follower.load();
  await leader.append({ term: 1, vote: 'a', commit: 10 }, Array.from({ length: 10 }, (_, i) => ({ index: i + 1, term: 1, type: 0, data: Buffer.from('x') })));
  const ping = pinger();
  const piece = Buffer.alloc(1 << 20);
  console.log(`${kind}: ${MIB} MiB`);
  await phase('take (sink, 1 MiB pieces, commit)', ping, async () => {
    const sink = leader.createSnapshot(meta(10), 5);
    for (let i = 0; i < MIB; i++) {
      piece.fill(i & 0xff);
      await sink.write(piece);
    }
    await sink.commit();
  });
  await phase('send (read a piece at a time)', ping, async () => {
    const reader = await leader.readSnapshot();
    for (let i = 0; i < reader.chunks; i++) await reader.read(i);
    reader.close();
  });
  await phase('install (pieces into a sink, commit dropping the log, read back)', ping, async () => {
    const reader = await leader.readSnapshot();
    const sink = follower.createSnapshot(reader.meta, Infinity);
    for (let i = 0; i < reader.chunks; i++) await sink.write(await reader.read(i));
    reader.close();
    await sink.commit();
    const back = await follower.readSnapshot();
    for (let i = 0; i < back.chunks; i++) await back.read(i);
    back.close();
  });
  if (kind === 'wal') {
    // The log a snapshot compacts: --log-mib MiB of 4 KiB entries (1 MiB segments, as a server's),
    // all covered by the next snapshot, whose commit removes their segments.
    const value = Buffer.alloc(4096, 7);
    let index = 10;
    const last = 10 + Math.ceil((LOG_MIB << 20) / value.length);
    while (index < last) {
      const batch = Array.from({ length: Math.min(64, last - index) }, (_, i) => ({ index: index + i + 1, term: 1, type: 0, data: value }));
      await leader.append({ term: 1, vote: 'a', commit: index + batch.length }, batch);
      index += batch.length;
    }
    await phase(`compact (a snapshot's commit removes ${LOG_MIB} MiB of log segments)`, ping, async () => {
      const sink = leader.createSnapshot(meta(last), last);
      await sink.write(Buffer.from('state'));
      await sink.commit();
    });
  }
  ping.stop();
  await leader.close();
  await follower.close();
}

async function main() {
  console.log(`# ${new Date().toISOString()} node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const kind of ['level', 'wal']) {
    const dir = mkdtempSync(join(os.tmpdir(), 'registry-snapshot-stalls-'));
    try {
      await run(kind, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
