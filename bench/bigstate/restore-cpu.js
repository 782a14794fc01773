#!/usr/bin/env node
// How fast the store rebuilds itself from a snapshot (issue #34: a restart at 512 MiB–1 GiB), in
// one process, without the agent around it: a store is filled with --mib MiB of KV values of 4 KiB
// (kv.apply commands with request stamps, as a server applies them), its snapshot written through
// Raft's own file store (WalStorage's snapshot sink, 1 MiB pieces) into a temp folder, then the
// stored snapshot read back and restored (`Store.restoreFrom`, as RaftNode.create does on a
// restart) --runs times. Reports per run: the restore's wall time, the main thread's CPU time in it,
// MB/s, and the largest gap of a 10 ms ping (the loop's longest stall); and the RSS around it.
// With --prof FILE the first run's restore alone is CPU-profiled into FILE (.cpuprofile).
// Usage: npx tsc -b packages/cli && node bench/bigstate/restore-cpu.js [--mib 256] [--runs 3] [--prof FILE]
'use strict';
const { mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');
const { Store } = require('../../packages/store/dist/index.js');
const { storageAt, filledStore, writeSnapshot } = require('./kv-state');
const { argOf, mainThreadSchedMs, stallMeter } = require('../support');

const MIB = Number(argOf('--mib', '256'));
const RUNS = Number(argOf('--runs', '3'));
const PROF = argOf('--prof', '');
const COUNT = Math.ceil((MIB * 2 ** 20) / 4096);
const rssMiB = () => (process.memoryUsage().rss / 2 ** 20).toFixed(0);

async function main() {
  console.log(`# ${new Date().toISOString()} node ${process.version}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`# node bench/bigstate/restore-cpu.js ${process.argv.slice(2).join(' ')}`);
  const { store } = filledStore(MIB);
  const dir = mkdtempSync(join(os.tmpdir(), 'restore-cpu-'));
  try {
    const storage = storageAt(dir);
    await writeSnapshot(storage, store, COUNT);
    console.log(`filled ${COUNT} values; snapshot written; RSS ${rssMiB()} MiB`);
    for (let r = 1; r <= RUNS; r++) {
      const target = new Store({ datacenter: 'dc1' });
      global.gc?.();
      const rss0 = rssMiB();
      const meter = stallMeter();
      const cpu0 = mainThreadSchedMs().cpuMs;
      const t0 = performance.now();
      const session = PROF && r === 1 ? new (require('node:inspector').Session)() : null;
      const post = (m, p) => new Promise((res, rej) => session.post(m, p ?? {}, (e, v) => (e ? rej(e) : res(v))));
      if (session) {
        session.connect();
        await post('Profiler.enable');
        await post('Profiler.setSamplingInterval', { interval: 500 });
        await post('Profiler.start');
      }
      const reader = await storage.readSnapshot();
      await target.restoreFrom(reader);
      reader.close();
      if (session) {
        const { profile } = await post('Profiler.stop');
        require('node:fs').writeFileSync(PROF, JSON.stringify(profile));
        session.disconnect();
      }
      const ms = performance.now() - t0;
      const worst = meter.stop();
      const cpu = mainThreadSchedMs().cpuMs - cpu0;
      if (target.kvGet ? !target.kvGet(`big/${String(COUNT - 1).padStart(8, '0')}`) : false) throw new Error('the last value is missing');
      console.log(`run ${r}: restored ${(reader.size / 2 ** 20).toFixed(0)} MiB in ${ms.toFixed(0)} ms (main thread CPU ${cpu.toFixed(0)} ms, ${(reader.size / 2 ** 20 / (ms / 1000)).toFixed(0)} MiB/s); longest ping gap ${worst.toFixed(0)} ms; RSS ${rss0} → ${rssMiB()} MiB; load ${os.loadavg()[0].toFixed(2)}`);
    }
    await storage.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
