#!/usr/bin/env node
// What a backup and its restore cost three servers holding a large KV state (issue #34 names
// `snapshot restore` beside a restart and an installed snapshot): --mib MiB of 4 KiB random values
// written at 64 in flight, then GET /v1/snapshot from the leader (time, archive size, the leader's
// RSS peak) and PUT /v1/snapshot of that archive back to the leader (time, every server's RSS peak
// during it and 10 s and 30 s after, against its RSS before, when it held the same state by
// replication). The largest event-loop gaps of each server during the save and during the restore
// come from the loop trace, when it is on (BENCH_LOOP_TRACE_DIR with bench/cluster/loop-trace.js).
// The default snapshot_restore_max_bytes (256 MiB) bounds --mib to about 250; above that, give the
// servers a config file that raises it (scripts/cluster.sh passes REGISTRY_CONFIG_FILE to each):
//   echo '{"snapshot_restore_max_bytes": 2147483648}' > /tmp/big.json; REGISTRY_CONFIG_FILE=/tmp/big.json node ... --mib 1024
//   npx tsc -b packages/cli && BENCH_LOOP_TRACE_DIR=D/trace BENCH_LOOP_GAP_MS=50 \
//     BENCH_CLUSTER_NODE_OPTIONS="-r $PWD/bench/cluster/loop-trace.js" node bench/bigstate/backup-restore.js --mib 192
'use strict';
const { randomBytes } = require('node:crypto');
const { readFileSync, readdirSync, existsSync } = require('node:fs');
const os = require('node:os');
const { join } = require('node:path');
const { argOf, loopbackCaller, sleep, startCluster } = require('../support');

const MIB = Number(argOf('--mib', '192'));
const CONNS = 64;
const VALUE = 4096;
const COUNT = Math.ceil((MIB * 2 ** 20) / VALUE);
const TRACE = process.env.BENCH_LOOP_TRACE_DIR;

const call = loopbackCaller({ maxSockets: CONNS + 8, timeoutMs: 600_000 });
const log = (...a) => console.error(`[${new Date().toISOString().slice(11, 19)}]`, ...a);
const rssMiB = (pid) => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const key = (i) => `big/${String(i).padStart(8, '0')}`;

/** Every server's RSS peak, sampled every 100 ms until stop(). */
function peaks(pids) {
  const peak = pids.map(rssMiB);
  const timer = setInterval(() => pids.forEach((p, i) => (peak[i] = Math.max(peak[i], rssMiB(p)))), 100);
  return () => (clearInterval(timer), peak);
}

/** The loop trace's gaps (ms) of each traced process between two wall-clock times, longest first. */
function gapsBetween(fromMs, toMs) {
  if (!TRACE || !existsSync(TRACE)) return [];
  const out = [];
  for (const f of readdirSync(TRACE)) {
    for (const line of readFileSync(join(TRACE, f), 'utf8').split('\n')) {
      const m = /^GAP .* at=(\S+) gap_ms=(\S+) cpu_ms=(\S+)/.exec(line);
      if (!m) continue;
      const end = Date.parse(m[1]);
      if (end >= fromMs && end - Number(m[2]) <= toMs) out.push({ file: f, ms: Number(m[2]), cpu: Number(m[3]) });
    }
  }
  return out.sort((a, b) => b.ms - a.ms);
}

const fmtGaps = (gs) => (gs.length === 0 ? 'none ≥ the trace threshold' : gs.slice(0, 6).map((g) => `${g.ms.toFixed(0)} ms (${g.cpu.toFixed(0)} on the CPU, ${g.file})`).join(', '));
const f0 = (xs) => xs.map((x) => x.toFixed(0)).join(', ');

async function main() {
  console.log(`# ${new Date().toISOString()} node ${process.version}, ${os.cpus().length} cores; load average before: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`# node bench/bigstate/backup-restore.js ${process.argv.slice(2).join(' ')}`);
  const c = await startCluster({ call, prefix: 'backup-restore-', keepLogs: argOf('--keep-logs', undefined), warm: { path: '/v1/kv/warm', body: 'x' } });
  try {
    const leader = c.leader();
    const url = c.urls[leader];
    const pids = [0, 1, 2].map((m) => c.pid(m));
    const values = Array.from({ length: 256 }, () => randomBytes(VALUE));
    let next = 0;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: CONNS }, async () => {
        while (next < COUNT) {
          const i = next++;
          const r = await call(url, 'PUT', `/v1/kv/${key(i)}`, values[i % 256]);
          if (r.status !== 200) throw new Error(`PUT ${r.status} ${r.body}`);
        }
      }),
    );
    log(`loaded ${COUNT} values (${MIB} MiB) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await sleep(20_000);
    const before = pids.map(rssMiB);
    log(`RSS before (the state by replication): ${f0(before)} MiB; leader s${leader + 1}`);

    let stop = peaks(pids);
    const s0 = Date.now();
    const saved = await call(url, 'GET', '/v1/snapshot');
    const s1 = Date.now();
    const savePeak = stop();
    if (saved.status !== 200) throw new Error(`GET /v1/snapshot ${saved.status} ${saved.body.slice(0, 200)}`);
    const archive = saved.body;
    log(`save: ${archive.length} bytes (${(archive.length / 2 ** 20).toFixed(1)} MiB) in ${((s1 - s0) / 1000).toFixed(2)} s; RSS peak ${f0(savePeak)} MiB`);
    await sleep(10_000);

    const beforeRestore = pids.map(rssMiB);
    stop = peaks(pids);
    const r0 = Date.now();
    const restored = await call(url, 'PUT', '/v1/snapshot', archive);
    const r1 = Date.now();
    const restorePeak = stop();
    if (restored.status !== 200) throw new Error(`PUT /v1/snapshot ${restored.status} ${restored.body.slice(0, 200)}`);
    log(`restore: ${((r1 - r0) / 1000).toFixed(2)} s; RSS before ${f0(beforeRestore)} → peak ${f0(restorePeak)} MiB`);
    await sleep(10_000);
    const after10 = pids.map(rssMiB);
    await sleep(20_000);
    const after30 = pids.map(rssMiB);
    const last = await call(url, 'GET', `/v1/kv/${key(COUNT - 1)}`);
    log(`after: +10 s ${f0(after10)} MiB, +30 s ${f0(after30)} MiB; the last key reads ${last.status}`);

    console.log(`
| ${MIB} MiB of 4 KiB values, three servers | s1 | s2 | s3 |
|---|---|---|---|
| RSS holding the state by replication, MiB | ${before.map((x) => x.toFixed(0)).join(' | ')} |
| save (GET /v1/snapshot from s${leader + 1}): ${((s1 - s0) / 1000).toFixed(2)} s, ${(archive.length / 2 ** 20).toFixed(1)} MiB; RSS peak, MiB | ${savePeak.map((x) => x.toFixed(0)).join(' | ')} |
| restore (PUT /v1/snapshot to s${leader + 1}): ${((r1 - r0) / 1000).toFixed(2)} s; RSS peak, MiB | ${restorePeak.map((x) => x.toFixed(0)).join(' | ')} |
| RSS 10 s after the restore, MiB (÷ by replication) | ${after10.map((x, i) => `${x.toFixed(0)} (${(x / before[i]).toFixed(2)}×)`).join(' | ')} |
| RSS 30 s after the restore, MiB (÷ by replication) | ${after30.map((x, i) => `${x.toFixed(0)} (${(x / before[i]).toFixed(2)}×)`).join(' | ')} |

Loop gaps during the save: ${fmtGaps(gapsBetween(s0, s1))}
Loop gaps during the restore and 10 s after: ${fmtGaps(gapsBetween(r0, r1 + 10_000))}`);
  } finally {
    c.stop();
    call.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
