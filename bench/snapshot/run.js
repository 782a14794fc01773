// Snapshot stalls: how long does taking a snapshot of a large store block the event loop?
// A 10 ms setInterval "ping" runs throughout; a stall is the gap between two pings minus the 10 ms
// period. The store holds N catalog nodes (one service and two checks each; every write stamped with
// a request id, so the dedup window is full-sized too). Writes arrive at a fixed rate (default 2,000/s,
// in groups every 5 ms), which alone keeps stalls well under 20 ms: the stall a snapshot adds shows.
//   fsm  — the state machine alone: a baseline window with the writes only, then one snapshot taken
//          through the Raft StateMachine adapter and persisted while the writes go on: into pieces
//          handed to a sink (persistTo, 1 MiB pieces through one reused buffer) when the store can,
//          else into one buffer (persist()). `--fsm-sink level` writes them into a LevelStorage in a
//          temp dir as the driver does (createSnapshot + commit; an older build: saveSnapshot of the
//          bytes); the default `none` only counts them.
//   raft — one RaftNode (MemoryStorage, or LevelStorage in a temp dir) whose state machine is the store,
//          writes proposed at the same rate for --seconds: once with snapshots off (threshold 10^9,
//          the baseline), once with the default snapshotThreshold (8192), snapshots taken by the driver.
// Throughput, not stalls (only when asked for by --phase):
//   throughput — the raft setup under 64 closed-loop proposers for --seconds (default snapshotThreshold;
//          `--spacing off` patches out the driver's ≤ 1 % snapshot spacing, to show what it is for);
//   apply  — Store.apply alone (re-registrations of 20,000 nodes), three rounds of 50,000.
// Usage:
//   npx tsc -b packages/raft packages/store && node bench/snapshot/run.js [--nodes 100000] [--runs 3]
//     [--phase fsm|raft|both|throughput|apply] [--seconds 12] [--rate 2000] [--storage memory|level]
//     [--spacing on|off] [--fsm-sink none|level] [--root DIR] [--marks]
// --marks prints each measured window's span; run under `node --trace-incremental-marking` and give the
// output to bench/snapshot/marking.js to count the GC marking cycles V8 started in each window, by reason.
// Each row also gives the window's ArrayBuffer memory growth (what V8 counts as external memory).
// --root DIR runs against another checkout's built packages (DIR/packages/{raft,store}/dist), e.g. an
// export of the previous commit, so before and after are measured by the same script.
'use strict';
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const { performance } = require('node:perf_hooks');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const NODES = Number(opt('nodes', 100_000));
const RUNS = Number(opt('runs', 3));
const PHASE = opt('phase', 'both');
const SECONDS = Number(opt('seconds', 12));
const RATE = Number(opt('rate', 2000));
const STORAGE = opt('storage', 'memory');
const SPACING = opt('spacing', 'on');
const FSM_SINK = opt('fsm-sink', 'none');
const ROOT = resolve(opt('root', join(__dirname, '..', '..')));
const PING_MS = 10;
const WRITE_EVERY_MS = 5;

const { Store, decodeEntry, encodeEntry } = require(join(ROOT, 'packages/store/dist'));
const { RaftNode, MemoryStorage, LevelStorage, InMemoryNetwork } = require(join(ROOT, 'packages/raft/dist'));

/**
 * The Raft StateMachine over a Store, as packages/server/src/agent/store-fsm.ts builds it (inlined so
 * the bench needs only the raft and store packages). A store with point-in-time snapshot handles
 * (`openSnapshot`) hands Raft the handle; an older store serialises synchronously in `snapshot()`.
 */
function storeFsm(store) {
  return {
    apply: (index, data) => {
      const { cmd, request } = decodeEntry(data);
      return store.apply(index, cmd, request);
    },
    snapshot: () => (typeof store.openSnapshot === 'function' ? store.openSnapshot() : store.snapshot()),
    restore: (data) => store.restore(data),
  };
}

let seq = 0;
// Ids shaped as servers make them (rpc/request-ids.ts: a random base64url prefix, '.', a base-36
// sequence), which the window keeps as numbers; other shapes take its rare string path.
const idPrefix = require('node:crypto').randomBytes(6).toString('base64url');
const stamp = () => ({ id: `${idPrefix}.${(++seq).toString(36)}`, at: Date.now() });

function registerCmd(i, status = 'passing') {
  return {
    type: 'catalog.register',
    req: {
      Node: `node-${i}`,
      Address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      NodeMeta: { rack: `r${i % 40}` },
      Service: { ID: `web-${i}`, Service: `svc-${i % 500}`, Tags: ['v1', 'http'], Port: 8080 },
      Checks: [
        { CheckID: 'serfHealth', Name: 'Serf Health Status', Status: 'passing' },
        { CheckID: `web-${i}-ok`, Name: 'web ok', ServiceID: `web-${i}`, Status: status },
      ],
    },
  };
}

/** The next write: a check of some node flips status. */
function nextWrite() {
  const i = (seq * 7919) % NODES;
  return encodeEntry({ cmd: registerCmd(i, seq % 2 ? 'warning' : 'passing'), request: stamp() });
}

function buildStore(n) {
  const store = new Store();
  let index = 0;
  for (let i = 0; i < n; i++) store.apply(++index, registerCmd(i), stamp());
  return store;
}

/** `write()` RATE times a second, in groups every WRITE_EVERY_MS; returns stop() → writes done. */
function writeLoad(write) {
  const perTick = Math.max(1, Math.round((RATE * WRITE_EVERY_MS) / 1000));
  let done = 0;
  const timer = setInterval(() => {
    for (let k = 0; k < perTick; k++) {
      write();
      done++;
    }
  }, WRITE_EVERY_MS);
  return () => {
    clearInterval(timer);
    return done;
  };
}

/**
 * With --marks, each measured window is printed as `# window <name> <from ms> <to ms>` (performance.now(),
 * which starts with the process as V8's trace timestamps do), so bench/snapshot/marking.js can count the
 * GC marking cycles V8 started inside it (run under --trace-incremental-marking).
 */
const MARKS = args.includes('--marks');
let windowName = 'window';

/** Stalls of a 10 ms ping while `fn` runs. */
async function withPing(fn) {
  const stalls = [];
  let last = performance.now();
  // ArrayBuffer memory (what V8 counts as external memory): its growth over the window is what starts
  // a major GC by "external memory pressure" past 64 MB, whatever the machine's load.
  let abStart = 0;
  let abMax = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stalls.push(now - last - PING_MS);
    last = now;
    const ab = process.memoryUsage().arrayBuffers;
    if (ab > abMax) abMax = ab;
  }, PING_MS);
  await new Promise((r) => setTimeout(r, 50)); // let the interval settle
  stalls.length = 0;
  last = performance.now();
  abStart = abMax = process.memoryUsage().arrayBuffers;
  const from = last;
  let result;
  try {
    result = await fn();
    await new Promise((r) => setTimeout(r, 3 * PING_MS));
  } finally {
    clearInterval(timer);
  }
  if (MARKS) console.log(`# window ${windowName} ${from.toFixed(0)} ${performance.now().toFixed(0)}`);
  stalls.sort((a, b) => a - b);
  return {
    result,
    maxStall: stalls.length ? stalls[stalls.length - 1] : NaN,
    p99: stalls[Math.floor(0.99 * (stalls.length - 1))],
    over20: stalls.filter((s) => s > 20).length,
    abGrowthMB: (abMax - abStart) / 1e6,
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function fsmRun(store) {
  const fsm = storeFsm(store);
  let index = store.lastIndex;
  const write = () => fsm.apply(++index, nextWrite());
  // Baseline: the same writes, no snapshot, for as long as the last snapshot took (at least 2 s).
  windowName = 'fsm-baseline';
  const baseline = await withPing(async () => {
    const stop = writeLoad(write);
    await sleep(Math.max(2000, fsmRun.lastMs ?? 0));
    stop();
  });
  windowName = 'fsm-snapshot';
  const snap = await withPing(async () => {
    const stop = writeLoad(write);
    await sleep(50);
    const t0 = performance.now();
    const at = index;
    const handle = fsm.snapshot();
    const syncMs = performance.now() - t0;
    const storage = FSM_SINK === 'level' ? await fsmStorage() : null;
    const meta = { index: at, term: 1, configuration: { servers: [] } };
    let size = 0;
    if (typeof handle.persistTo === 'function') {
      const sink = storage ? storage.createSnapshot(meta, Infinity) : { write: async (piece) => void (size += piece.length) };
      await handle.persistTo(sink);
      if (storage) {
        await sink.commit();
        size = sink.size;
      }
    } else {
      const data = typeof handle.persist === 'function' ? await handle.persist() : handle;
      if (storage) await storage.saveSnapshot(meta, data, Infinity);
      size = data.length;
    }
    const totalMs = performance.now() - t0;
    if (typeof handle.release === 'function') handle.release();
    if (storage) await fsmStorage.close();
    const writesDuring = index - at;
    stop();
    fsmRun.lastMs = totalMs;
    return { bytes: size, syncMs, totalMs, writesDuring };
  });
  return { baseline, snap };
}

/** --fsm-sink level: a LevelStorage in a fresh temp dir (opened before the clock starts). */
async function fsmStorage() {
  const dir = mkdtempSync(join(tmpdir(), 'snapshot-bench-fsm-'));
  const storage = new LevelStorage({ path: dir });
  await storage.load();
  fsmStorage.close = async () => {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return storage;
}

/** A RaftNode over `store`, started from a snapshot of it (as a restarted server is); not measured. */
async function raftNode(store, snapshotThreshold) {
  const dir = STORAGE === 'level' ? mkdtempSync(join(tmpdir(), 'snapshot-bench-')) : undefined;
  const storage = dir ? new LevelStorage({ path: dir }) : new MemoryStorage();
  const transport = new InMemoryNetwork().transport('n1:1');
  const servers = [{ id: 'n1', address: transport.address }];
  // Start from a snapshot of the prebuilt store (as a restarted server does); not measured.
  const index = store.lastIndex;
  await storage.saveSnapshot({ index, term: 1, configuration: { servers } }, store.snapshot(), Infinity);
  await storage.append({ term: 1, vote: 'n1', commit: index }, []);
  const node = await RaftNode.create({ id: 'n1', storage, transport, fsm: storeFsm(store), snapshotThreshold });
  node.start();
  while (!node.leaderReady()) await sleep(10);
  return { node, dir };
}

async function raftRun(store, snapshotThreshold) {
  const { node, dir } = await raftNode(store, snapshotThreshold);
  const before = node.stats();
  windowName = snapshotThreshold > 1e8 ? 'raft-off' : 'raft-on';
  let errors = 0;
  let pending = 0;
  const m = await withPing(async () => {
    const stop = writeLoad(() => {
      pending++;
      node.propose(nextWrite()).then(
        () => pending--,
        () => {
          pending--;
          errors++;
        },
      );
    });
    await sleep(SECONDS * 1000);
    const proposed = stop();
    while (pending > 0) await sleep(5);
    return { proposed };
  });
  await sleep(200);
  const after = node.stats();
  await node.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  return { ...m, errors, snapshots: after.snapshotsTaken - before.snapshotsTaken, applied: after.appliedIndex - before.appliedIndex };
}

/** 64 closed-loop proposers for SECONDS: proposals/s and snapshots taken. */
async function throughputRun(store) {
  if (SPACING === 'off') {
    // The driver's snapshotDue() without its time spacing: a snapshot every snapshotThreshold entries.
    RaftNode.prototype.snapshotDue = function () {
      if (this.snapshotWrite || this.appliedSinceSnapshot < this.opts.snapshotThreshold) return false;
      if (this.snapshotFault && performance.now() < this.snapshotRetryAt) return false;
      return !(performance.now() < (this.persistRetryAt ?? 0));
    };
  }
  const { node, dir } = await raftNode(store, 8192);
  const before = node.stats();
  let done = 0;
  const stopAt = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (performance.now() < stopAt) {
        await node.propose(nextWrite());
        done++;
      }
    }),
  );
  const perSecond = done / ((performance.now() - t0) / 1000);
  const snapshots = node.stats().snapshotsTaken - before.snapshotsTaken;
  await node.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  return { perSecond, snapshots };
}

/** Store.apply alone: 50,000 re-registrations (check status flips) of 20,000 nodes, per round. */
function applyRounds() {
  const store = new Store();
  let index = 0;
  for (let i = 0; i < 20_000; i++) store.apply(++index, registerCmd(i), stamp());
  const rounds = [];
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    for (let i = 0; i < 50_000; i++) store.apply(++index, registerCmd(i % 20_000, i % 2 ? 'warning' : 'passing'), stamp());
    rounds.push(50_000 / ((performance.now() - t0) / 1000));
  }
  return rounds;
}

const load = () => require('node:os').loadavg()[0].toFixed(1);
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));

async function main() {
  if (PHASE === 'apply') {
    const rounds = applyRounds();
    console.log(`node ${process.version}; ${ROOT}; Store.apply: ${rounds.map((x) => `${Math.round(x).toLocaleString('en-US')}/s`).join(', ')}`);
    return;
  }
  const t0 = performance.now();
  const store = buildStore(NODES);
  const probe = typeof store.openSnapshot === 'function' ? store.openSnapshot() : null;
  probe?.release(); // an open handle makes the store keep pre-images
  const handleProto = probe && Object.getPrototypeOf(probe);
  const mode = !handleProto
    ? 'synchronous store.snapshot()'
    : typeof handleProto.persistTo === 'function'
      ? 'point-in-time handle, persisted in pieces into a sink (persistTo)'
      : 'point-in-time handle (openSnapshot, persist in slices)';
  console.log(`node ${process.version}; ${ROOT}; ${NODES.toLocaleString('en-US')} nodes (1 service, 2 checks each) built in ${f((performance.now() - t0) / 1000)} s`);
  console.log(`snapshot path: ${mode}; fsm sink: ${FSM_SINK}; writes at ${RATE}/s; 10 ms ping; load average ${require('node:os').loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  if (PHASE === 'fsm' || PHASE === 'both') {
    console.log('\nfsm phase: baseline window (writes only), then one snapshot taken and persisted while the writes go on\n');
    console.log('| run | baseline: longest stall ms | snapshot: longest stall ms | p99 ms | stalls > 20 ms | snapshot() call ms | until bytes ms | MB | writes applied meanwhile | ArrayBuffer growth MB | load average |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (let r = 1; r <= RUNS; r++) {
      const { baseline, snap } = await fsmRun(store);
      const x = snap.result;
      console.log(
        `| ${r} | ${f(baseline.maxStall)} | **${f(snap.maxStall)}** | ${f(snap.p99)} | ${snap.over20} | ${f(x.syncMs)} | ${f(x.totalMs)} | ${f(x.bytes / 1e6)} | ${x.writesDuring} | ${f(snap.abGrowthMB)} | ${load()} |`,
      );
    }
  }
  if (PHASE === 'throughput') {
    console.log(`\nthroughput phase: one RaftNode (${STORAGE === 'level' ? 'LevelStorage' : 'MemoryStorage'}), 64 closed-loop proposers for ${SECONDS} s, spacing ${SPACING}\n`);
    console.log('| run | proposals/s | snapshots taken |');
    console.log('|---:|---:|---:|');
    for (let r = 1; r <= RUNS; r++) {
      const m = await throughputRun(store);
      console.log(`| ${r} | ${Math.round(m.perSecond).toLocaleString('en-US')} | ${m.snapshots} |`);
    }
  }
  if (PHASE === 'raft' || PHASE === 'both') {
    console.log(`\nraft phase: one RaftNode (${STORAGE === 'level' ? 'LevelStorage' : 'MemoryStorage'}), writes proposed at ${RATE}/s for ${SECONDS} s; baseline with snapshots off\n`);
    console.log('| run | baseline: longest stall ms | snapshots on: longest stall ms | p99 ms | stalls > 20 ms | snapshots taken | writes applied | errors | ArrayBuffer growth MB | load average |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (let r = 1; r <= RUNS; r++) {
      const base = await raftRun(store, 1e9);
      const m = await raftRun(store, 8192);
      console.log(`| ${r} | ${f(base.maxStall)} | **${f(m.maxStall)}** | ${f(m.p99)} | ${m.over20} | ${m.snapshots} | ${m.applied} | ${m.errors + base.errors} | ${f(m.abGrowthMB)} | ${load()} |`);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
