// The event-loop stall of rebuilding a restored state, with and without preparing it ahead of the
// Raft entry (Store.prepareRestore, issue 11): the same snapshot bytes of N catalog nodes (a service
// and a check each, every write with a request id), restored into the store alternately
//   one-step: the `snapshot.restore` entry applied unprepared (decode + load inside the apply)
//   prepared: prepareRestore() in slices, then the entry applied (a swap)
// A 5 ms interval timer measures the longest gap beyond its period during each, so both ways are
// measured alike (on a loaded machine a gap also holds time the process was not scheduled).
// Usage: npx tsc -b packages/store && node bench/snapshot/restore-stall.js [--nodes 100000] [--runs 3]
'use strict';
const { resolve } = require('node:path');
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const { Store } = require(resolve(__dirname, '../../packages/store/dist'));

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const n = Number(opt('nodes', '100000'));
const runs = Number(opt('runs', '3'));

function meter() {
  let last = performance.now();
  let worst = 0;
  const t = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 5);
    last = now;
  }, 5);
  return () => {
    clearInterval(t);
    return Math.max(worst, performance.now() - last - 5);
  };
}

const tick = () => new Promise((r) => setTimeout(r, 20));

async function main() {
  console.log(`# ${new Date().toISOString()} node ${process.version}, ${os.cpus().length} cores, load average: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const source = new Store({ datacenter: 'dc1' });
  for (let i = 0; i < n; i++) {
    source.apply(i + 1, {
      type: 'catalog.register',
      req: { Node: `node-${i}`, Address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, Service: { ID: `web-${i}`, Service: 'web', Port: 8080, Tags: ['v1'] }, Check: { CheckID: `web-${i}-alive`, Name: 'alive', Status: 'passing', ServiceID: `web-${i}` } },
    }, { id: `r${i}`, at: Date.now() });
  }
  const bytes = source.snapshot();
  console.log(`nodes=${n} state=${(bytes.length / 1048576).toFixed(1)} MiB`);
  const store = new Store({ datacenter: 'dc1' });
  let index = 1;
  for (let r = 1; r <= runs; r++) {
    await tick();
    let stop = meter();
    let t = performance.now();
    await tick();
    const one = store.apply(index++, { type: 'snapshot.restore', state: bytes });
    await tick();
    const oneStall = stop();
    const oneMs = performance.now() - t - 40;
    if (one !== true) throw new Error(String(one));

    stop = meter();
    t = performance.now();
    await tick();
    await store.prepareRestore(`k${r}`, bytes);
    const swapAt = performance.now();
    const ok = store.apply(index++, { type: 'snapshot.restore', state: bytes, prepared: `k${r}` });
    const swapMs = performance.now() - swapAt;
    await tick();
    const prepStall = stop();
    const prepMs = performance.now() - t - 40;
    if (ok !== true) throw new Error(String(ok));
    console.log(`run=${r} one-step: ${oneMs.toFixed(0)} ms, longest stall ${oneStall.toFixed(0)} ms | prepared: ${prepMs.toFixed(0)} ms wall, longest stall ${prepStall.toFixed(0)} ms, apply (swap) ${swapMs.toFixed(1)} ms | load ${os.loadavg()[0].toFixed(2)}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
