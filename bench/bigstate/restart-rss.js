// A server restarted on a large state (issue #34): one `registry agent -server -bootstrap-expect 1`
// process on a data dir in a temp folder, loaded with --mib MiB of KV values of 4 KiB random bytes
// (64 writes in flight, bounded by count and by --load-timeout), left until a Raft snapshot covers
// them, then stopped (SIGTERM) and started again on the same data dir. Reports: load rate, data dir
// size, RSS before the restart, restart time (spawn → the last value readable) and RSS right after,
// RSS again after --settle seconds, and the restart's progress lines; also how many Raft snapshots
// were taken while loading and the data dir ÷ the raw state after them.
// Then (unless --no-wiped) the same load into three servers (scripts/cluster.sh, default settings),
// a follower SIGKILLed, its data dir wiped (node-id put back) and restarted: the leader's RSS before,
// at its peak while it sends the snapshot, and --settle s after; the time until the wiped follower
// serves the last value (?stale); and the largest event-loop delay the leader and the follower
// report (registry_runtime_event_loop_delay_seconds{stat="max"}, 10 s windows) meanwhile.
// Usage:
//   npx tsc -b packages/cli && node bench/bigstate/restart-rss.js [--mib 256] [--settle 10] [--no-wiped] [--no-restart]
//     [--config '{"raft":{"snapshot_threshold":1024,"snapshot_interval_ms":1000}}']  (the single server's config file: many snapshots)
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const { join } = require('node:path');
const { freePort, sleep, loopbackCaller, startCluster, until, wipeAndRestartFollower } = require('../support');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const MIB = Number(opt('mib', '256'));
const SETTLE_S = Number(opt('settle', '10'));
const LOAD_TIMEOUT_S = Number(opt('load-timeout', '600'));
const VALUE = 4096;
const COUNT = Math.ceil((MIB * 1024 * 1024) / VALUE);
const CLI = join(__dirname, '..', '..', 'packages', 'cli', 'bin', 'registry.js');

const call = loopbackCaller({ maxSockets: 64, timeoutMs: 30_000 });
const rssMiB = (pid) => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const anonFile = (pid) => {
  const st = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(st)[1]) / 1024;
  return `anon ${kb('RssAnon').toFixed(0)} + file ${kb('RssFile').toFixed(0)}`;
};
const hwmMiB = (pid) => Number(/^VmHWM:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const duMiB = (dir) => Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) / 1024;

const CONFIG = opt('config', '');

function start(dir, dataDir, httpPort, serverPort, tag) {
  const log = join(dir, `agent-${tag}.log`);
  const extra = [];
  if (CONFIG) {
    writeFileSync(join(dir, 'agent.json'), CONFIG);
    extra.push('-config-file', join(dir, 'agent.json'));
  }
  const child = spawn(process.execPath, [CLI, 'agent', '-server', '-bootstrap-expect', '1', '-node', 'big', '-data-dir', dataDir, '-http-port', String(httpPort), '-server-port', String(serverPort), '-dns-port', '-1', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = createWriteStream(log);
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  const exited = new Promise((r) => child.on('exit', r));
  return { child, exited, log, url: `http://127.0.0.1:${httpPort}` };
}

/** 64 writers put COUNT values of VALUE random bytes through `urlOf()`; answers how many and the seconds it took. */
async function load(urlOf) {
  const values = Array.from({ length: 256 }, () => randomBytes(VALUE));
  let next = 0;
  const t0 = Date.now();
  const deadline = t0 + LOAD_TIMEOUT_S * 1000;
  const worker = async () => {
    while (next < COUNT && Date.now() < deadline) {
      const i = next++;
      const r = await call(urlOf(), 'PUT', `/v1/kv/big/${String(i).padStart(8, '0')}`, values[i % values.length]);
      if (r.status !== 200) throw new Error(`PUT ${i}: ${r.status} ${r.body}`);
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  return { count: next, seconds: (Date.now() - t0) / 1000 };
}

const snapshotsIn = (log) => (readFileSync(log, 'utf8').match(/raft: took snapshot/g) ?? []).length;

/** The largest event-loop delay (ms) a server reports for its last finished 10 s window. */
async function loopMaxMs(url) {
  const r = await call(url, 'GET', '/v1/agent/metrics?format=prometheus');
  const m = /registry_runtime_event_loop_delay_seconds\{stat="max"\} ([0-9.e+-]+)/.exec(r.body.toString());
  return m ? Number(m[1]) * 1000 : NaN;
}

async function wiped() {
  console.log(`## a wiped follower (three servers, ${MIB} MiB)`);
  const cluster = await startCluster({ call, prefix: 'registry-bigstate-wiped-', warm: { path: '/v1/kv/warm', body: 'x' } });
  try {
    const leaderUrl = cluster.urls[cluster.leader()]; // asked once: cluster.sh is a process per call
    const { count, seconds } = await load(() => leaderUrl);
    console.log(`loaded ${count} values (${((count * VALUE) / 2 ** 20).toFixed(0)} MiB) in ${seconds.toFixed(1)} s: ${(count / seconds).toFixed(0)} writes/s`);
    // cluster.sh asks every server; on a loaded machine a majority may briefly name none: ask again.
    let leader = -1;
    for (let i = 0; i < 30 && leader < 0; i++) {
      try {
        leader = cluster.leader();
      } catch {
        await sleep(1_000);
      }
    }
    if (leader < 0) throw new Error('no leader known to a majority for 30 s');
    const snapped = await until(() => snapshotsIn(cluster.logFile(leader)) > 0, 180_000, 500);
    await sleep(5_000);
    const raw = (count * VALUE) / 2 ** 20;
    for (const i of [0, 1, 2]) {
      const data = join(cluster.dir, `s${i + 1}`, 'data');
      console.log(`s${i + 1}${i === leader ? ' (leader)' : ''}: ${snapshotsIn(cluster.logFile(i))} snapshots taken, data dir ${duMiB(data).toFixed(0)} MiB = ${(duMiB(data) / raw).toFixed(2)}× the raw ${raw.toFixed(0)} MiB; RSS ${rssMiB(cluster.pid(i)).toFixed(0)} MiB`);
    }
    if (!snapped) console.log('no snapshot seen on the leader: the follower is caught up from the log');
    const lpid = cluster.pid(leader);
    const before = rssMiB(lpid);
    const last = `/v1/kv/big/${String(count - 1).padStart(8, '0')}?stale`;
    const { victim, started } = wipeAndRestartFollower({ ...cluster, leader: () => leader });
    let peak = before;
    let loopMax = 0;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssMiB(lpid));
      } catch {
        // gone
      }
    }, 50);
    const loops = setInterval(() => {
      for (const i of [leader, victim]) loopMaxMs(cluster.urls[i]).then((ms) => (loopMax = Math.max(loopMax, ms || 0)), () => undefined);
    }, 2_000);
    try {
      if (!(await until(async () => (await call(cluster.urls[victim], 'GET', last)).status === 200, 600_000, 50))) throw new Error('the wiped follower never served the last value');
      const catchUpS = (Date.now() - started) / 1000;
      console.log(`wiped follower s${victim + 1}: the last value served ${catchUpS.toFixed(2)} s after its restart; leader RSS ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} (+${(peak - before).toFixed(0)}) while sending`);
      await sleep(SETTLE_S * 1000 + 10_000); // the follower's restore window and one more 10 s metrics window
      console.log(`  ${SETTLE_S} s later: leader RSS ${rssMiB(lpid).toFixed(0)} MiB (${anonFile(lpid)}); follower RSS ${rssMiB(cluster.pid(victim)).toFixed(0)} MiB; largest event-loop delay reported by either meanwhile ${loopMax.toFixed(0)} ms`);
      const sent = readFileSync(cluster.logFile(leader), 'utf8').split('\n').filter((l) => /sent snapshot/.test(l));
      for (const l of sent.slice(-2)) console.log(`  leader log: ${l.slice(0, 220)}`);
      const lag = readFileSync(cluster.logFile(victim), 'utf8').split('\n').filter((l) => /event loop lag|installed snapshot|restored the installed/.test(l));
      for (const l of lag.slice(-4)) console.log(`  follower log: ${l.slice(0, 220)}`);
      // Where the catch-up's time went: the wiped follower's milestones, in s after its restart.
      const milestones = /raft: (receiving a snapshot|received snapshot|restored the installed snapshot while it arrived|restoring the installed snapshot|restored the installed snapshot|installed snapshot)|entering (follower|Follower)|New leader|new leader|agent: started|Started HTTP/;
      const since = (l) => ((Date.parse(l.slice(0, 24)) - started) / 1000).toFixed(2);
      const after = readFileSync(cluster.logFile(victim), 'utf8').split('\n').filter((l) => /^\d{4}-/.test(l) && Date.parse(l.slice(0, 24)) >= started - 1000);
      if (after.length > 0) console.log(`  follower +${since(after[0])} s: first log line after the restart`);
      for (const l of after.filter((x) => milestones.test(x)).slice(0, 12)) console.log(`  follower +${since(l)} s: ${l.slice(25, 200)}`);
      console.log(`  follower +${catchUpS.toFixed(2)} s: served the last value`);
    } finally {
      clearInterval(sampler);
      clearInterval(loops);
    }
  } finally {
    cluster.stop();
  }
}

async function main() {
  console.log(`# ${new Date().toISOString()} node ${process.version}, ${os.cpus().length} cores, load average before: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (!args.includes('--no-restart')) await restart().catch((err) => {
    call.close();
    throw err;
  });
  try {
    if (!args.includes('--no-wiped')) await wiped();
  } finally {
    call.close();
  }
  console.log(`# load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

async function restart() {
  console.log(`## a restart (one server, ${MIB} MiB)`);
  const dir = mkdtempSync(join(os.tmpdir(), 'registry-bigstate-'));
  const dataDir = join(dir, 'data');
  const httpPort = await freePort();
  const serverPort = await freePort();
  let a = start(dir, dataDir, httpPort, serverPort, 'first');
  try {
    if (!(await until(async () => (await call(a.url, 'GET', '/v1/status/leader')).body.toString() !== '""', 60_000))) throw new Error('no leader');
    const { count: next, seconds: loadS } = await load(() => a.url);
    console.log(`loaded ${next} values of ${VALUE} B (${((next * VALUE) / 2 ** 20).toFixed(0)} MiB) in ${loadS.toFixed(1)} s: ${(next / loadS).toFixed(0)} writes/s`);
    // A Raft snapshot covering most of it (the server takes one every 30-60 s once 8192 entries are applied).
    const snapped = await until(() => /raft: took snapshot/.test(readFileSync(a.log, "utf8")), 120_000, 500);
    await sleep(5_000);
    const rawMiB = (next * VALUE) / 2 ** 20;
    console.log(`snapshot seen in the log: ${snapped} (${snapshotsIn(a.log)} taken); before restart: RSS ${rssMiB(a.child.pid).toFixed(0)} MiB (${anonFile(a.child.pid)}; peak ${hwmMiB(a.child.pid).toFixed(0)}), data dir ${duMiB(dataDir).toFixed(0)} MiB = ${(duMiB(dataDir) / rawMiB).toFixed(2)}× raw`);
    a.child.kill('SIGTERM');
    await a.exited;
    const last = `/v1/kv/big/${String(next - 1).padStart(8, '0')}`;
    const t1 = Date.now();
    a = start(dir, dataDir, httpPort, serverPort, 'restart');
    if (!(await until(async () => (await call(a.url, 'GET', last)).status === 200, 300_000, 20))) throw new Error('restart never served the last value');
    const restartS = (Date.now() - t1) / 1000;
    console.log(`restart: ${restartS.toFixed(2)} s to serve the last value; RSS right after ${rssMiB(a.child.pid).toFixed(0)} MiB (${anonFile(a.child.pid)}; peak ${hwmMiB(a.child.pid).toFixed(0)})`);
    await sleep(SETTLE_S * 1000);
    console.log(`after ${SETTLE_S} s: RSS ${rssMiB(a.child.pid).toFixed(0)} MiB (${anonFile(a.child.pid)}; peak ${hwmMiB(a.child.pid).toFixed(0)}), data dir ${duMiB(dataDir).toFixed(0)} MiB`);
    const lines = readFileSync(a.log, 'utf8').split('\n').filter((l) => /restor/i.test(l));
    for (const l of lines.slice(0, 20)) console.log(`  log: ${l.slice(0, 220)}`);
  } finally {
    a.child.kill('SIGKILL');
    await a.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
