#!/usr/bin/env node
// A large state side by side (issue #34): registry, etcd 3.4 (Debian's etcd-server) and, when a
// `consul` binary is on PATH, Consul 1.4.5 — each as three servers on loopback with default
// settings, loaded with --mib MiB of KV values of 4 KiB random bytes (--conns writes in flight to
// the leader, bounded by count and by --load-timeout), then left idle for --idle seconds. Measured
// per system, one system after the other (never two at once):
//   load rate (first half and whole), data dir per server (du) and ÷ the raw bytes written, RSS per
//   server; a follower restarted (SIGTERM, start on the same data dir): time until it serves the
//   last value from its own state, its RSS right after and --settle seconds later; a follower
//   wiped (SIGKILL, empty data dir, same identity): time until it serves the last value, and the
//   leader's RSS before, at its peak during the catch-up and after.
// Usage (after `npm run build`):
//   node bench/bigstate/side-by-side.js [--mib 512] [--systems registry,etcd,consul] [--conns 64]
//                                       [--idle 60] [--settle 10] [--rounds 1] [--load-timeout 900]
//                                       [--keep-logs DIR] (registry: each server's log copied there at the end)
//                                       [--catch-up-timeout 300] (seconds a wiped follower is given)
//                                       [--loader-nice 0] (niceness of the load generator while it writes)
// Prints one markdown table per round with every figure; raw progress lines go to stderr.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const { join } = require('node:path');
const { REPO, argOf, freePort, loopbackCaller, sleep, startCluster, until } = require('../support');

const MIB = Number(argOf('--mib', '512'));
const CONNS = Number(argOf('--conns', '64'));
const IDLE_S = Number(argOf('--idle', '60'));
const SETTLE_S = Number(argOf('--settle', '10'));
const ROUNDS = Number(argOf('--rounds', '1'));
const LOAD_TIMEOUT_S = Number(argOf('--load-timeout', '900'));
/** How long a wiped follower is given to serve the last value (etcd's never does: its member id is gone). */
const CATCH_UP_TIMEOUT_S = Number(argOf('--catch-up-timeout', '300'));
/**
 * Niceness of this process (the load generator) while it writes: 0 leaves it level with the servers.
 * Clients of a real cluster run elsewhere; here the generator's 64 writers share the two cores with
 * the three servers, and at 10 the servers come first when both are ready (the same for every peer).
 */
const LOADER_NICE = Number(argOf('--loader-nice', '0'));
const VALUE = 4096;
const COUNT = Math.ceil((MIB * 1024 * 1024) / VALUE);
// As bench/cluster/run.js: the peers' scripts sit beside the repo (ETCD_CLUSTER_SH names another copy).
// A git worktree under /work/wt/<name> finds them two levels up.
const ETCD_SH =
  process.env.ETCD_CLUSTER_SH ??
  [join(REPO, '..', 'shared', 'peers', 'etcd', 'etcd-cluster.sh'), join(REPO, '..', '..', 'shared', 'peers', 'etcd', 'etcd-cluster.sh')].find((p) => existsSync(p)) ??
  join(REPO, '..', 'shared', 'peers', 'etcd', 'etcd-cluster.sh');

const onPath = (bin) => {
  try {
    execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const ASKED = argOf('--systems', 'registry,etcd,consul').split(',');
const SYSTEMS = ASKED.filter((s) => (s === 'consul' ? onPath('consul') : s === 'etcd' ? onPath('etcd') && existsSync(ETCD_SH) : true));
// Said, not skipped silently (a run once lost its etcd column to a script path it could not find).
for (const s of ASKED) if (!SYSTEMS.includes(s)) console.error(`skipping ${s}: ${s === 'etcd' ? `no etcd on PATH or no ${ETCD_SH} (ETCD_CLUSTER_SH names it)` : `no ${s} on PATH`}`);

const call = loopbackCaller({ maxSockets: CONNS + 8, timeoutMs: 30_000 });
const log = (...a) => console.error(`[${new Date().toISOString().slice(11, 19)}]`, ...a);
const status = (pid) => readFileSync(`/proc/${pid}/status`, 'utf8');
const kbOf = (st, key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(st)[1]);
// NaN for a process that is gone (etcd's wiped member exits: it cannot rejoin under its old id).
const alive = (pid, f) => {
  try {
    return f(status(pid));
  } catch {
    return NaN;
  }
};
const rssMiB = (pid) => alive(pid, (st) => kbOf(st, 'VmRSS') / 1024);
const anonMiB = (pid) => alive(pid, (st) => kbOf(st, 'RssAnon') / 1024);
const duMiB = (dir) => Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) / 1024;
const key = (i) => `big/${String(i).padStart(8, '0')}`;
const b64 = (s) => Buffer.from(s).toString('base64');

/** registry: scripts/cluster.sh through bench/support's startCluster. Members are 0..2. */
async function registry() {
  const c = await startCluster({ call, prefix: 'bigstate-registry-', keepLogs: argOf('--keep-logs', undefined), warm: { path: '/v1/kv/warm', body: 'x' } });
  const dataDir = (m) => join(c.dir, `s${m + 1}`, 'data');
  return {
    name: 'registry',
    leader: () => c.leader(),
    put: (m, i, v) => call(c.urls[m], 'PUT', `/v1/kv/${key(i)}`, v).then((r) => r.status === 200 || Promise.reject(new Error(`PUT ${r.status} ${r.body}`))),
    servesLocally: async (m, i) => (await call(c.urls[m], 'GET', `/v1/kv/${key(i)}?stale`, undefined, 2000)).status === 200,
    /** The largest event-loop delay of the server's last finished 10 s window (its own metric), ms. */
    loopDelayMs: async (m) => {
      const r = await call(c.urls[m], 'GET', '/v1/agent/metrics?format=prometheus', undefined, 2000);
      const line = /^registry_runtime_event_loop_delay_seconds\{stat="max"\} (\S+)$/m.exec(r.body.toString());
      return line ? Number(line[1]) * 1000 : NaN;
    },
    pid: (m) => c.pid(m),
    dataDir,
    term: (m) => c.cmd('term', String(m + 1)),
    kill: (m) => c.cmd('kill', String(m + 1)),
    restart: (m) => c.cmd('restart', String(m + 1)),
    wipe: (m) => {
      // Same server, same identity: its node-id is put back (as bench/support's wipeAndRestartFollower).
      const nodeId = readFileSync(join(dataDir(m), 'node-id'), 'utf8');
      rmSync(dataDir(m), { recursive: true, force: true });
      mkdirSync(dataDir(m), { recursive: true });
      writeFileSync(join(dataDir(m), 'node-id'), nodeId);
    },
    stop: () => c.stop(),
  };
}

/** etcd 3.4 through ../shared/peers/etcd/etcd-cluster.sh (its own fixed loopback ports). */
async function etcd() {
  const dir = mkdtempSync(join(os.tmpdir(), 'bigstate-etcd-'));
  // The default backend quota (2 GiB) would stop a 1 GiB load with its MVCC overhead.
  const env = { ...process.env, ETCD_BENCH_DIR: dir, ETCD_EXTRA_FLAGS: '--quota-backend-bytes=17179869184' };
  const sh = (...a) => execFileSync(ETCD_SH, a, { env, encoding: 'utf8', timeout: 120_000 }).trim();
  const starters = [];
  sh('start');
  const urls = sh('endpoints').split(',');
  const base = (m) => urls[m].replace('localhost', '127.0.0.1');
  return {
    name: 'etcd',
    // The script prints the leader and may still exit 1 (its last loop test is false): read stdout.
    leader: () => {
      let out;
      try {
        out = sh('leader');
      } catch (err) {
        out = String(err.stdout ?? '');
      }
      return Number(out.split(/\s+/)[0]) - 1;
    },
    put: (m, i, v) =>
      call(base(m), 'POST', '/v3/kv/put', JSON.stringify({ key: b64(key(i)), value: v.toString('base64') })).then(
        (r) => r.status === 200 || Promise.reject(new Error(`put ${r.status} ${r.body}`)),
      ),
    servesLocally: async (m, i) => {
      const r = await call(base(m), 'POST', '/v3/kv/range', JSON.stringify({ key: b64(key(i)), serializable: true }), 2000);
      return r.status === 200 && JSON.parse(r.body.toString()).count === '1';
    },
    pid: (m) => Number(readFileSync(join(dir, 'pids', `m${m + 1}.pid`), 'utf8')),
    dataDir: (m) => join(dir, `m${m + 1}`),
    term: (m) => sh('term', String(m + 1)),
    kill: (m) => sh('kill', String(m + 1)),
    // Not `restart`'s own wait for a healthy cluster: a member catching up on a large state keeps each
    // `etcdctl endpoint health` waiting past the script's bound. The bench polls the member itself.
    restart: (m) => {
      const child = spawn(ETCD_SH, ['restart', String(m + 1)], { env, stdio: 'ignore' });
      starters.push(child);
    },
    // etcd cannot take a member back with an empty data dir under its old id (it panics: "tocommit
    // is out of range"), so its documented way is used: remove the member, add it again (a new id,
    // the same name and peer URL), and start it on an empty dir with --initial-cluster-state existing.
    wipe: (m) => {
      rmSync(join(dir, `m${m + 1}`), { recursive: true, force: true });
      const others = urls.filter((_, k) => k !== m).join(',');
      const ctl = (...a) => execFileSync('etcdctl', ['--endpoints', others, ...a], { env: { ...env, ETCDCTL_API: '3' }, encoding: 'utf8', timeout: 30_000 });
      const line = ctl('member', 'list').split('\n').find((l) => l.split(', ')[2] === `m${m + 1}`);
      const peerUrl = line.split(', ')[3];
      ctl('member', 'remove', line.split(', ')[0]);
      ctl('member', 'add', `m${m + 1}`, `--peer-urls=${peerUrl}`);
    },
    stop: () => {
      for (const c of starters) if (c.exitCode === null) c.kill('SIGTERM');
      try {
        sh('stop');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Consul (a `consul` binary on PATH): three -server agents on loopback, default settings. */
async function consul() {
  const dir = mkdtempSync(join(os.tmpdir(), 'bigstate-consul-'));
  const ports = [];
  for (let m = 0; m < 3; m++) ports.push({ http: await freePort(), lan: await freePort(), wan: await freePort(), server: await freePort() });
  const procs = [];
  const dataDir = (m) => join(dir, `c${m + 1}`);
  const start = (m) => {
    mkdirSync(dataDir(m), { recursive: true });
    const p = ports[m];
    const join_ = ports.filter((_, k) => k !== m).flatMap((q) => ['-retry-join', `127.0.0.1:${q.lan}`]);
    const child = spawn('consul', ['agent', '-server', '-bootstrap-expect', '3', '-node', `c${m + 1}`, '-data-dir', dataDir(m), '-bind', '127.0.0.1', '-client', '127.0.0.1',
      '-http-port', String(p.http), '-dns-port', '-1', '-serf-lan-port', String(p.lan), '-serf-wan-port', String(p.wan), '-server-port', String(p.server), ...join_],
      { stdio: 'ignore' });
    procs[m] = { child, exited: new Promise((r) => child.on('exit', r)) };
  };
  const url = (m) => `http://127.0.0.1:${ports[m].http}`;
  const signal = async (m, sig) => {
    procs[m].child.kill(sig);
    await Promise.race([procs[m].exited, sleep(30_000)]);
  };
  for (let m = 0; m < 3; m++) start(m);
  const leader = async () => {
    const addr = JSON.parse((await call(url(0), 'GET', '/v1/status/leader')).body.toString());
    return ports.findIndex((p) => addr === `127.0.0.1:${p.server}`);
  };
  if (!(await until(async () => (await leader()) >= 0 && (await call(url(await leader()), 'PUT', '/v1/kv/warm', 'x')).status === 200, 60_000, 200))) throw new Error('consul: no leader in 60 s');
  let known = await leader();
  return {
    name: 'consul',
    // Asked once per phase; a synchronous answer keeps the adapters alike.
    leader: () => known,
    refreshLeader: async () => (known = await leader()),
    put: (m, i, v) => call(url(m), 'PUT', `/v1/kv/${key(i)}`, v).then((r) => r.status === 200 || Promise.reject(new Error(`PUT ${r.status} ${r.body}`))),
    // A Consul server that has not heard from a leader yet forwards even a ?stale read to the leader
    // (Consul #4554's fix), so a wiped follower "served" the value 0.3-0.5 s after its start, before
    // it held anything. It holds the value once its own Raft has applied the index the read names.
    servesLocally: async (m, i) => {
      const r = await call(url(m), 'GET', `/v1/kv/${key(i)}?stale`, undefined, 2000);
      if (r.status !== 200) return false;
      const self = await call(url(m), 'GET', '/v1/agent/self', undefined, 2000);
      const applied = Number(JSON.parse(self.body.toString()).Stats?.raft?.applied_index ?? 0);
      return applied >= Number(r.headers['x-consul-index'] ?? Infinity);
    },
    pid: (m) => procs[m].child.pid,
    dataDir,
    term: (m) => signal(m, 'SIGTERM'),
    kill: (m) => signal(m, 'SIGKILL'),
    restart: (m) => start(m),
    wipe: (m) => {
      const nodeId = readFileSync(join(dataDir(m), 'node-id'), 'utf8');
      rmSync(dataDir(m), { recursive: true, force: true });
      mkdirSync(dataDir(m), { recursive: true });
      writeFileSync(join(dataDir(m), 'node-id'), nodeId);
    },
    stop: async () => {
      for (let m = 0; m < 3; m++) if (procs[m].child.exitCode === null) await signal(m, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Peak RSS of `pid` sampled every 100 ms until stop() is called. */
function sampleRss(pid) {
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMiB(pid));
    } catch {
      // gone
    }
  }, 100);
  return { stop: () => (clearInterval(timer), peak) };
}

/**
 * Where the system reports it (registry), the largest event-loop delay each server saw, polled every
 * 5 s (its windows are 10 s, so none is missed), kept per phase and server: the load (with the
 * snapshots the servers take meanwhile) and the wiped follower's catch-up (the leader's send, the
 * follower's install). The wiped follower's figure is kept apart: its first window holds its own
 * start (loading and compiling its modules), which is no snapshot's doing.
 */
function loopDelays(s) {
  const worst = {};
  let phase = null;
  const poll = async () => {
    if (!s.loopDelayMs || !phase) return;
    const at = phase;
    for (const m of [0, 1, 2]) {
      const ms = await s.loopDelayMs(m).catch(() => NaN);
      if (Number.isFinite(ms)) (worst[at] ??= [])[m] = Math.max(worst[at][m] ?? 0, ms);
    }
  };
  const timer = setInterval(() => void poll(), 5000);
  return {
    phase: async (name) => {
      await poll();
      phase = name;
    },
    stop: () => clearInterval(timer),
    worst,
  };
}

async function measure(make) {
  const s = await make();
  const row = { system: s.name };
  const delays = loopDelays(s);
  row.loopDelay = delays.worst;
  try {
    await delays.phase('load');
    await s.refreshLeader?.();
    const leader = s.leader();
    const values = Array.from({ length: 256 }, () => randomBytes(VALUE));
    let next = 0;
    let halfAt = 0;
    const t0 = Date.now();
    const deadline = t0 + LOAD_TIMEOUT_S * 1000;
    const worker = async () => {
      while (next < COUNT && Date.now() < deadline) {
        const i = next++;
        await s.put(leader, i, values[i % values.length]);
        if (i === Math.floor(COUNT / 2)) halfAt = Date.now();
      }
    };
    const nice = os.getPriority();
    if (LOADER_NICE !== nice) os.setPriority(LOADER_NICE);
    try {
      await Promise.all(Array.from({ length: CONNS }, worker));
    } finally {
      // Back for the rest (restarts, catch-up): a process may lower its niceness only as root.
      if (LOADER_NICE !== nice) os.setPriority(nice);
    }
    const loadS = (Date.now() - t0) / 1000;
    row.loadHalf = Math.round(Math.floor(COUNT / 2) / ((halfAt - t0) / 1000));
    row.load = Math.round(next / loadS);
    log(`${s.name}: ${next} values (${((next * VALUE) / 2 ** 20).toFixed(0)} MiB) in ${loadS.toFixed(1)} s`);
    const last = next - 1;
    await sleep(IDLE_S * 1000);

    await delays.phase(null);
    const raw = (next * VALUE) / 2 ** 20;
    row.dataDir = [0, 1, 2].map((m) => duMiB(s.dataDir(m)));
    row.dataRatio = row.dataDir.map((d) => d / raw);
    row.rss = [0, 1, 2].map((m) => rssMiB(s.pid(m)));
    row.anonBefore = [0, 1, 2].map((m) => anonMiB(s.pid(m)));
    log(`${s.name}: data dirs ${row.dataDir.map((d) => d.toFixed(0))} MiB, RSS ${row.rss.map((r) => r.toFixed(0))} MiB`);

    // A follower restarted on its data dir.
    await s.refreshLeader?.();
    const f1 = [0, 1, 2].find((m) => m !== s.leader());
    row.rssBeforeRestart = rssMiB(s.pid(f1));
    await s.term(f1);
    const t1 = Date.now();
    await s.restart(f1);
    if (!(await until(() => s.servesLocally(f1, last), 300_000, 20))) throw new Error(`${s.name}: the restarted follower never served the last value`);
    row.restartS = (Date.now() - t1) / 1000;
    row.rssAfterRestart = rssMiB(s.pid(f1));
    await sleep(SETTLE_S * 1000);
    row.rssSettled = rssMiB(s.pid(f1));
    row.anonBeforeRestart = row.anonBefore?.[f1];
    row.anonSettled = anonMiB(s.pid(f1));
    log(`${s.name}: restart ${row.restartS.toFixed(2)} s, RSS ${row.rssBeforeRestart.toFixed(0)} → ${row.rssAfterRestart.toFixed(0)} → ${row.rssSettled.toFixed(0)} MiB`);

    // A follower wiped: the leader must send it the whole state.
    await s.refreshLeader?.();
    const lead = s.leader();
    const f2 = [0, 1, 2].find((m) => m !== lead);
    row.leaderBefore = rssMiB(s.pid(lead));
    row.wiped = f2;
    await s.kill(f2);
    s.wipe(f2);
    const sampler = sampleRss(s.pid(lead));
    await delays.phase('catch-up');
    const t2 = Date.now();
    await s.restart(f2);
    const caught = await until(() => s.servesLocally(f2, last), CATCH_UP_TIMEOUT_S * 1000, 20);
    row.catchUpS = caught ? (Date.now() - t2) / 1000 : NaN;
    row.leaderPeak = sampler.stop();
    // The 10 s window the catch-up ended in has finished by then.
    await sleep(Math.max(SETTLE_S, 11) * 1000);
    await delays.phase(null);
    row.leaderAfter = rssMiB(s.pid(lead));
    row.caughtUpRss = rssMiB(s.pid(f2));
    log(`${s.name}: wiped follower ${caught ? `caught up in ${row.catchUpS.toFixed(2)} s` : 'never caught up'}; leader RSS ${row.leaderBefore.toFixed(0)} → peak ${row.leaderPeak.toFixed(0)} → ${row.leaderAfter.toFixed(0)} MiB`);
  } finally {
    delays.stop();
    await s.stop();
  }
  return row;
}

const f0 = (n) => (Number.isFinite(n) ? n.toFixed(0) : '—');
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : '—');
const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : '—');
const span = (xs, f) => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;

function table(rows) {
  const col = (label, f) => `| ${label} | ${rows.map(f).join(' | ')} |`;
  return [
    `| ${MIB} MiB of 4 KiB values, ${CONNS} in flight | ${rows.map((r) => r.system).join(' | ')} |`,
    `|---|${rows.map(() => '---').join('|')}|`,
    col('load, first half · whole (writes/s)', (r) => `${r.loadHalf} · ${r.load}`),
    col(`data dir per server after ${IDLE_S} s idle, MiB (÷ raw)`, (r) => `${span(r.dataDir, f0)} (${span(r.dataRatio, f2)}×)`),
    col('RSS per server, MiB', (r) => span(r.rss, f0)),
    col('follower restart → serves the last value, s', (r) => f2(r.restartS)),
    col(`its RSS before → right after → ${SETTLE_S} s later, MiB`, (r) => `${f0(r.rssBeforeRestart)} → ${f0(r.rssAfterRestart)} → ${f0(r.rssSettled)} (${f2(r.rssSettled / r.rssBeforeRestart)}×)`),
    col('of which anonymous, before → after, MiB', (r) => `${f0(r.anonBeforeRestart)} → ${f0(r.anonSettled)} (${f2(r.anonSettled / r.anonBeforeRestart)}×)`),
    col('wiped follower → serves the last value, s', (r) => f2(r.catchUpS)),
    col('leader RSS before → peak during that catch-up → after, MiB', (r) => `${f0(r.leaderBefore)} → ${f0(r.leaderPeak)} (+${f0(r.leaderPeak - r.leaderBefore)}) → ${f0(r.leaderAfter)}`),
    col('the caught-up follower\'s RSS, MiB', (r) => f1(r.caughtUpRss)),
    col('largest event-loop delay of any server: load (with its snapshots) · catch-up (leader and kept follower; the wiped follower, its start included), ms', (r) => {
      const d = r.loopDelay;
      if (d.load === undefined) return '—';
      const most = (xs) => Math.max(0, ...xs.filter((x) => x !== undefined));
      const c = d['catch-up'] ?? [];
      return `${f0(most(d.load))} · ${f0(most(c.filter((_, m) => m !== r.wiped)))} (${f0(c[r.wiped] ?? NaN)})`;
    }),
  ].join('\n');
}

async function main() {
  console.log(`# ${new Date().toISOString()} node ${process.version}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; load average before: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`# node bench/bigstate/side-by-side.js ${process.argv.slice(2).join(' ')} (systems: ${SYSTEMS.join(', ')})`);
  const makers = { registry, etcd, consul };
  for (let round = 1; round <= ROUNDS; round++) {
    const rows = [];
    // Alternate the order between rounds so that no system always runs on a warmer or colder machine.
    const order = round % 2 === 1 ? SYSTEMS : [...SYSTEMS].reverse();
    for (const name of order) rows.push(await measure(makers[name]));
    rows.sort((a, b) => SYSTEMS.indexOf(a.system) - SYSTEMS.indexOf(b.system));
    console.log(`\n## round ${round}\n\n${table(rows)}\n`);
  }
  call.close();
}

main().catch((err) => {
  console.error(err);
  call.close();
  process.exitCode = 1;
});
