#!/usr/bin/env node
// Where a follower's restart at a large state spends its time (issue #34): three servers
// (scripts/cluster.sh, default settings) loaded with --mib MiB of KV values of 4 KiB random bytes
// (64 writes in flight to the leader), left --idle seconds, then one follower restarted --rounds
// times on its own data dir (SIGTERM, start again). Each round reports the time from spawn until the
// follower serves the last value from its own state (?stale), its RSS before and right after, and
// the stages its log names, in ms after the spawn: the data dir opened, the snapshot restore's
// start and end, the agent running, the leader known. With --prof DIR the restarted server runs with
// bench/cluster/cpu-profile.js (a profile lands in DIR when it is stopped at the end of the round)
// and the heaviest functions by self time are printed.
// Also the CPU time (user + system, all threads) the restarted process used until it served the last
// value: on a shared machine the wall time follows the load, the CPU time much less. With --bins
// A,B (two entry points, e.g. packages/cli/bin/registry.js of two builds copied aside) the rounds
// alternate between them on the same loaded cluster and data dir: an A/B of the restart alone.
// With --wipe each round empties the follower's data dir first (its node-id kept: the same server),
// so it catches up by a snapshot from the leader; --prof-leader DIR then profiles the leader from the
// wipe until the follower serves the last value (both ends of the transfer, with --prof).
// Usage (after `npx tsc -b packages/cli`):
//   node bench/bigstate/follower-restart.js [--mib 256] [--idle 20] [--rounds 3] [--settle 5] [--prof /tmp/prof] [--bins A,B]
//                                           [--wipe] [--prof-leader /tmp/prof-leader]
'use strict';
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const { join } = require('node:path');
const { argOf, cpuSeconds, loopbackCaller, sleep, startCluster, until } = require('../support');

const MIB = Number(argOf('--mib', '256'));
const IDLE_S = Number(argOf('--idle', '20'));
const ROUNDS = Number(argOf('--rounds', '3'));
const SETTLE_S = Number(argOf('--settle', '5'));
const PROF = argOf('--prof', '');
const BINS = argOf('--bins', '').split(',').filter(Boolean);
const WIPE = process.argv.includes('--wipe');
const PROF_LEADER = argOf('--prof-leader', '');
// The profiling preload (whole process, or one SIGUSR2-to-SIGUSR2 stretch), sampling every 500 µs here.
const CPU_PROFILE = join(__dirname, '..', 'cluster', 'cpu-profile.js');
const VALUE = 4096;
const COUNT = Math.ceil((MIB * 1024 * 1024) / VALUE);

const call = loopbackCaller({ maxSockets: 72, timeoutMs: 30_000 });
const status = (pid) => readFileSync(`/proc/${pid}/status`, 'utf8');
const kb = (st, k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(st)[1]) / 1024;
const rss = (pid) => {
  const st = status(pid);
  return `${kb(st, 'VmRSS').toFixed(0)} MiB (anon ${kb(st, 'RssAnon').toFixed(0)} + file ${kb(st, 'RssFile').toFixed(0)})`;
};
const duMiB = (dir) => Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) / 1024;
const key = (i) => `big/${String(i).padStart(8, '0')}`;

const STAGES = [
  ['data dir opened', /data dir format/],
  ['snapshot restore starts', /raft: restoring the stored snapshot(?!.*ms=)/],
  ['snapshot restored', /raft: restored the stored snapshot/],
  ['receiving a snapshot', /raft: receiving a snapshot/],
  ['snapshot received', /raft: received snapshot/],
  ['installed snapshot restored', /raft: restored the installed snapshot/],
  ['log replayed', /raft: (replayed|applied the log)/],
  ['agent running', /registry agent running/],
  ['leader known', /cluster leader known/],
];

/** The stages of the last start in `log` (after its `cluster.sh: starting` marker), ms after `t0`. */
function stages(log, t0) {
  const lines = readFileSync(log, 'utf8').split('\n');
  let from = 0;
  lines.forEach((l, i) => {
    if (/cluster\.sh: starting/.test(l)) from = i;
  });
  const out = [];
  for (const [name, re] of STAGES) {
    const l = lines.slice(from).find((x) => re.test(x));
    if (l) out.push(`${name} ${Date.parse(l.slice(0, 24)) - t0}`);
  }
  const lag = lines.slice(from).filter((x) => /event loop lag/.test(x)).length;
  if (lag) out.push(`${lag} loop-lag warnings`);
  return out.join(' · ');
}

/** The functions with the most self time in a .cpuprofile, with their share. */
function heaviest(file, n = 25) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const self = new Map();
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const dt = p.timeDeltas;
  for (let i = 0; i < p.samples.length; i++) {
    const node = byId.get(p.samples[i]);
    const cf = node.callFrame;
    const name = `${cf.functionName || '(anonymous)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + (dt[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, us]) => `  ${(us / 1000).toFixed(0).padStart(6)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n');
}

async function main() {
  console.log(`# ${new Date().toISOString()} node ${process.version}, ${os.cpus().length} cores; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`# node bench/bigstate/follower-restart.js ${process.argv.slice(2).join(' ')}`);
  if (PROF_LEADER) {
    // Every server carries the preload, idle until SIGUSR2 (cpu-profile.js's signal mode); only the
    // leader is signalled, and writes <dir>/cpu-<pid>-<n>.cpuprofile.
    mkdirSync(PROF_LEADER, { recursive: true });
    Object.assign(process.env, { BENCH_CLUSTER_NODE_OPTIONS: `--require ${CPU_PROFILE}`, BENCH_CPU_PROF_DIR: PROF_LEADER, BENCH_CPU_PROF_ON_SIGNAL: '1', BENCH_CPU_PROF_INTERVAL_US: '500' });
  }
  const c = await startCluster({ call, prefix: 'bigstate-follower-restart-', keepLogs: argOf('--keep-logs', undefined), warm: { path: '/v1/kv/warm', body: 'x' } });
  try {
    const leader = c.leader();
    const values = Array.from({ length: 256 }, () => randomBytes(VALUE));
    let next = 0;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < COUNT) {
          const i = next++;
          const r = await call(c.urls[leader], 'PUT', `/v1/kv/${key(i)}`, values[i % values.length]);
          if (r.status !== 200) throw new Error(`PUT ${r.status} ${r.body}`);
        }
      }),
    );
    console.log(`loaded ${COUNT} values (${MIB} MiB) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await sleep(IDLE_S * 1000);
    const f = [0, 1, 2].find((m) => m !== c.leader());
    const last = `/v1/kv/${key(COUNT - 1)}?stale`;
    const results = new Map();
    // The entry point the follower runs now (cluster.sh finds its process by it).
    let running = {};
    for (let round = 1; round <= ROUNDS; round++) {
      const before = rss(c.pid(f));
      const data = join(c.dir, `s${f + 1}`, 'data');
      const snaps = readdirSync(join(data, 'raft', 'snapshots'));
      c.cmdWith(running, 'term', String(f + 1));
      const bin = BINS.length > 0 ? BINS[(round - 1) % BINS.length] : '';
      running = bin ? { REGISTRY_CLUSTER_BIN: bin } : {};
      const profDir = PROF ? join(PROF, `round-${round}`) : '';
      if (profDir) mkdirSync(profDir, { recursive: true });
      if (WIPE) {
        const nodeId = readFileSync(join(data, 'node-id'), 'utf8');
        rmSync(data, { recursive: true, force: true });
        mkdirSync(data, { recursive: true });
        writeFileSync(join(data, 'node-id'), nodeId);
      }
      const leaderPid = c.pid(c.leader());
      if (PROF_LEADER) process.kill(leaderPid, 'SIGUSR2');
      const t1 = Date.now();
      c.cmdWith({ ...running, ...(profDir ? { NODE_OPTIONS: `--require ${CPU_PROFILE}`, BENCH_CPU_PROF_DIR: profDir, BENCH_CPU_PROF_ON_SIGNAL: '', BENCH_CPU_PROF_INTERVAL_US: '500' } : {}) }, 'restart', String(f + 1));
      if (!(await until(async () => (await call(c.urls[f], 'GET', last, undefined, 2000)).status === 200, 300_000, 20))) throw new Error('never served the last value');
      const s = (Date.now() - t1) / 1000;
      if (PROF_LEADER) {
        process.kill(leaderPid, 'SIGUSR2');
        await sleep(2000);
        for (const p of readdirSync(PROF_LEADER).filter((n) => n.startsWith(`cpu-${leaderPid}-`))) console.log(`  leader profile ${join(PROF_LEADER, p)}:\n${heaviest(join(PROF_LEADER, p))}`);
      }
      const cpu = cpuSeconds(c.pid(f));
      const after = rss(c.pid(f));
      await sleep(SETTLE_S * 1000);
      const tag = bin || 'default';
      if (!results.has(tag)) results.set(tag, []);
      results.get(tag).push({ s, cpu });
      console.log(`round ${round}${bin ? ` (${bin})` : ''}: s${f + 1} served the last value ${s.toFixed(2)} s after its spawn, having used ${cpu.toFixed(2)} s of CPU; RSS ${before} → ${after} → ${rss(c.pid(f))} ${SETTLE_S} s later; data dir ${duMiB(data).toFixed(0)} MiB (${snaps.join(', ')}); load average ${os.loadavg()[0].toFixed(2)}`);
      console.log(`  stages (ms after spawn): ${stages(c.logFile(f), t1)}`);
      if (profDir) {
        c.cmdWith(running, 'term', String(f + 1));
        for (const p of readdirSync(profDir)) console.log(`  profile ${join(profDir, p)}:\n${heaviest(join(profDir, p))}`);
        c.cmdWith(running, 'restart', String(f + 1));
        await until(async () => (await call(c.urls[f], 'GET', last, undefined, 2000)).status === 200, 300_000, 50);
      }
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const [tag, rs] of results) {
      console.log(`${tag}: median restart ${median(rs.map((r) => r.s)).toFixed(2)} s (${rs.map((r) => r.s.toFixed(2)).join(', ')}), median CPU ${median(rs.map((r) => r.cpu)).toFixed(2)} s (${rs.map((r) => r.cpu.toFixed(2)).join(', ')})`);
    }
  } finally {
    c.stop();
    call.close();
  }
}

main().catch((err) => {
  console.error(err);
  call.close();
  process.exitCode = 1;
});
