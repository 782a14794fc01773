// bench/large-answers/first-read-harness.js: what first-read.js and filtered-first-read.js share
// (issue #16) — the store they load, the two probes a read is measured with, and the A/B rounds of
// first reads after a restore. Each script names its reads; the harness takes the figures.
'use strict';
const { performance } = require('node:perf_hooks');
const { loadavg } = require('node:os');
const { mainThreadSchedMs } = require('../support');
const v8 = require('node:v8');
const vm = require('node:vm');
const { Store } = require('../../packages/store/dist');
// Loading sliced-json installs the lane that build steps take turns in, as in an agent.
require('../../packages/server/dist/http/sliced-json');
const { settledRead } = require('../../packages/server/dist/rpc/settled-read');

const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);

/**
 * A store holding `n` nodes, each with one instance of `web` (tag v1) and one service check, node
 * meta rack=r0…r15; with `kv`, also `n` keys under `app/`.
 */
function load(n, { kv }) {
  const store = new Store({ datacenter: 'dc1' });
  let index = 1;
  for (let i = 0; i < n; i++) {
    const node = `node-${String(i).padStart(6, '0')}`;
    store.apply(index++, {
      type: 'catalog.register',
      req: {
        Node: node,
        Address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`,
        NodeMeta: { rack: `r${i % 16}` },
        Service: { ID: 'web-1', Service: 'web', Port: 8080, Tags: ['v1'], Meta: { ver: '1' } },
        Check: { CheckID: 'web-alive', Name: 'web alive', Status: 'passing', ServiceID: 'web-1', Output: 'HTTP GET /health: 200 OK' },
      },
    });
    if (kv) {
      store.apply(index++, { type: 'kv.apply', op: { Verb: 'set', Key: `app/${String(i).padStart(6, '0')}/config`, Value: Buffer.from(`value ${i}`), Flags: 0 } });
    }
  }
  return store;
}

/** CPU time of the main thread (the event loop) in ms (bench/support.js mainThreadSchedMs). */
function mainThreadCpuMs() {
  return mainThreadSchedMs().cpuMs;
}

/**
 * Runs `read` with a 10 ms timer beside it; the timer's worst lateness is the longest stall. On a
 * loaded machine that wall figure includes time the process waited for a core, so a second probe
 * counts CPU instead: a 1 ms timer notes the main thread's CPU used between two of its firings — about
 * one turn of the event loop — and keeps the worst (in steps: about one step; in one go: the whole
 * build).
 */
async function measured(read) {
  let last = performance.now();
  let worst = 0;
  const ping = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 10);
    last = now;
  }, 10);
  // A 1 ms timer, not a setImmediate chain: a chain keeps the loop busy, which the lane reads as
  // other work waiting and paces the steps for (and its own CPU would count as the read's).
  let turnCpu = mainThreadCpuMs();
  let worstTurnCpu = 0;
  const probe = setInterval(() => {
    const now = mainThreadCpuMs();
    worstTurnCpu = Math.max(worstTurnCpu, now - turnCpu);
    turnCpu = now;
  }, 1);
  // A few ticks first, so that both probes are running when the read starts.
  await new Promise((r) => setTimeout(r, 25));
  last = performance.now();
  worst = 0;
  worstTurnCpu = 0;
  turnCpu = mainThreadCpuMs();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await read();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  // The stall that ends with the read's last step shows at the timer's next firing.
  await new Promise((r) => setTimeout(r, 15));
  clearInterval(probe);
  clearInterval(ping);
  return { value, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, stallMs: Math.max(0, worst), turnCpuMs: worstTurnCpu };
}

/**
 * The bench: `--size` nodes loaded (`kv`: keys too), then `--rounds` rounds of, per mode (one-go and
 * steps, alternated), a restore of the snapshot and the first read of each of `reads` (name → read
 * of the store), which must answer at least `minRows(name) * size` rows. Lines are tagged `label`.
 */
function runFirstReads({ label, reads, kv, minRows }) {
  const SIZE = Number(arg('--size', '100000'));
  const ROUNDS = Number(arg('--rounds', '3'));
  // A full collection between rounds (as --expose-gc would allow).
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  (async () => {
    const t0 = performance.now();
    const store = load(SIZE, { kv });
    const snapshot = store.snapshot();
    console.log(`LOADED size=${SIZE} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const results = { 'one-go': {}, steps: {} };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 === 0 ? ['one-go', 'steps'] : ['steps', 'one-go']) {
        // Fresh tables: every listing's next read is a first build.
        store.restore(snapshot);
        // The old tables' garbage is collected now, not during the first read measured.
        gc();
        for (const [kind, read] of Object.entries(reads)) {
          const r = await measured(mode === 'one-go' ? async () => read(store) : () => settledRead(() => read(store)));
          const length = r.value.value.length;
          const least = Math.floor(SIZE * minRows(kind));
          if (length < least) throw new Error(`${kind}: ${length} rows, expected ≥ ${least}`);
          (results[mode][kind] ??= []).push(r);
          console.log(
            `${label} ${kind} mode=${mode} size=${SIZE} round=${round} longest-stall=${r.stallMs.toFixed(1)} ms (longest loop turn ${r.turnCpuMs.toFixed(1)} ms cpu) read=${r.wallMs.toFixed(0)} ms cpu=${r.cpuMs.toFixed(0)} ms load=${loadavg()[0].toFixed(1)}`,
          );
        }
      }
    }
    const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const kind of Object.keys(reads)) {
      const line = ['one-go', 'steps']
        .map((mode) => {
          const rs = results[mode][kind];
          return `${mode}: stall median ${median(rs.map((r) => r.stallMs)).toFixed(1)} / worst ${Math.max(...rs.map((r) => r.stallMs)).toFixed(1)} ms, longest turn median ${median(rs.map((r) => r.turnCpuMs)).toFixed(1)} ms cpu, read ${median(rs.map((r) => r.wallMs)).toFixed(0)} ms, cpu ${median(rs.map((r) => r.cpuMs)).toFixed(0)} ms`;
        })
        .join(' | ');
      console.log(`SUMMARY ${kind} size=${SIZE} rounds=${ROUNDS} ${line} load=${loadavg()[0].toFixed(1)}`);
    }
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { load, mainThreadCpuMs, measured, runFirstReads };
