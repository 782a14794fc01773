#!/usr/bin/env node
// What a table's rows cost a store, applied as a server applies them (indexed-record.ts): --rows KV
// writes of 4 KiB values and --rows catalog registrations (a node, a service and a check each), each
// kind into a fresh store in a fresh process. Reports per kind the CPU per apply, the V8 heap the
// rows hold after a full GC (per row), and how many hidden classes (V8 maps) the heap holds (a map
// per row shows as about one more map per row). --store names another tree's
// packages/store (its dist built) for an A/B; runs alternate between the two when both are given.
//   npx tsc -b packages/cli && node bench/store/record-shapes.js [--rows 50000] [--runs 3] [--store packages/store[,other/packages/store]]
'use strict';
const { execFileSync } = require('node:child_process');
const { join, resolve } = require('node:path');
const { randomBytes } = require('node:crypto');

const argOf = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};

/** One kind of row applied to a fresh store from `storeDir`; prints one JSON line. */
function measure(storeDir, kind, rows) {
  const v8 = require('node:v8');
  const { Store, encodeStamped, decodeEntry } = require(join(storeDir, 'dist', 'index.js'));
  const value = randomBytes(4096);
  const command = (i) =>
    kind === 'kv'
      ? { type: 'kv.apply', op: { Verb: 'set', Key: `app/${String(i).padStart(8, '0')}`, Value: value, Flags: 0 } }
      : {
          type: 'catalog.register',
          req: {
            Node: `node-${i}`,
            Address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
            Service: { ID: 'web', Service: 'web', Port: 80, Tags: ['a', 'b'] },
            Check: { CheckID: 'web-alive', Name: 'web', Status: 'passing', ServiceID: 'web' },
          },
        };
  // As a server applies them: each command stamped, encoded and decoded (a Raft entry's bytes).
  const entries = Array.from({ length: rows }, (_, i) => encodeStamped(command(i), `bench.${i}`, 1_000_000 + i, false));
  global.gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const store = new Store({ datacenter: 'dc1' });
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < rows; i++) {
    const { cmd, request } = decodeEntry(entries[i]);
    store.apply(i + 1, cmd, request);
  }
  const cpu = process.cpuUsage(cpu0);
  entries.length = 0;
  global.gc();
  const heapAfter = process.memoryUsage().heapUsed;
  globalThis.keep = store;
  return {
    kind,
    usPerApply: (cpu.user + cpu.system) / rows,
    heapPerRow: (heapAfter - heapBefore) / rows,
    // Node 20 keeps maps in old space and counts them nowhere else: a heap snapshot's "system / Map"
    // nodes, taken after the timing.
    maps: countMaps(v8),
  };
}

function countMaps(v8) {
  const { readFileSync, rmSync } = require('node:fs');
  const file = v8.writeHeapSnapshot(join(require('node:os').tmpdir(), `record-shapes-${process.pid}.heapsnapshot`));
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  rmSync(file);
  const fields = snap.snapshot.meta.node_fields;
  const nameAt = fields.indexOf('name');
  let maps = 0;
  for (let i = 0; i < snap.nodes.length; i += fields.length) if (snap.strings[snap.nodes[i + nameAt]] === 'system / Map') maps++;
  return maps;
}

function main() {
  if (process.argv[2] === '--measure') {
    process.stdout.write(JSON.stringify(measure(process.argv[3], process.argv[4], Number(process.argv[5]))) + '\n');
    return;
  }
  const rows = Number(argOf('--rows', '50000'));
  const runs = Number(argOf('--runs', '3'));
  const stores = argOf('--store', join(__dirname, '..', '..', 'packages', 'store'))
    .split(',')
    .map((s) => resolve(s));
  console.log(`# ${new Date().toISOString()} node bench/store/record-shapes.js ${process.argv.slice(2).join(' ')}`);
  console.log('| store | rows | run | µs per apply | heap per row, B | V8 maps in the heap |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (let r = 1; r <= runs; r++) {
    for (const kind of ['kv', 'catalog']) {
      for (const store of stores) {
        const out = JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--max-old-space-size=4096', __filename, '--measure', store, kind, String(rows)], { encoding: 'utf8' }));
        console.log(`| ${store} | ${rows} ${kind} | ${r} | ${out.usPerApply.toFixed(1)} | ${out.heapPerRow.toFixed(0)} | ${out.maps} |`);
      }
    }
  }
}

main();
