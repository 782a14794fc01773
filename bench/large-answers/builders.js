#!/usr/bin/env node
// bench/large-answers/builders.js (issue #16, item 3): how long building the value of a large
// health or KV answer holds the event loop, before any JSON is written (the HTTP layer writes
// large lists in slices: http/sliced-json.ts). In process, on the store package alone:
//   health — N nodes, each with one instance of `web` and one service check;
//            store.healthService('web') (what the health.service endpoint builds);
//   kv     — N keys under `app/`; the kv.get endpoint in ?recurse mode (store.kvList + one output
//            per entry), with ACLs off (the allow-all authorizer).
// The first build (nothing kept yet: after a start or a restore), then R builds each right after a
// write that changes one instance (its check's output) and one key of the answer: the median and
// the worst (wall ms; process CPU ms beside it, as this machine is shared and a process waiting for
// a core is not blocking its own loop).
//
//   npm run build && node bench/large-answers/builders.js [--sizes 10000,100000] [--runs 5]
'use strict';
const { performance } = require('node:perf_hooks');
const { loadavg } = require('node:os');
const { Store } = require('../../packages/store/dist');
const { kvReads } = require('../../packages/server/dist/endpoints/kv-reads');

const { Authorizer } = require('../../packages/acl/dist');

/** ACLs off: the allow-all authorizer, as on an agent without ACLs. */
const readsAll = Authorizer.allowAll();

const argAt = (name) => process.argv.indexOf(name);
const arg = (name, dflt) => (argAt(name) >= 0 ? process.argv[argAt(name) + 1] : dflt);
const SIZES = arg('--sizes', '10000,100000').split(',').map(Number);
const RUNS = Number(arg('--runs', '5'));

function timed(fn) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = fn();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { value, ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

function summary(name, n, runs) {
  const ms = runs.map((r) => r.ms).sort((a, b) => a - b);
  const cpu = runs.map((r) => r.cpuMs).sort((a, b) => a - b);
  const mid = (xs) => xs[Math.floor(xs.length / 2)];
  return `${name} n=${n} median ${mid(ms).toFixed(1)} ms (cpu ${mid(cpu).toFixed(1)}) worst ${ms[ms.length - 1].toFixed(1)} ms (cpu ${cpu[cpu.length - 1].toFixed(1)}) load=${loadavg()[0].toFixed(1)}`;
}

for (const n of SIZES) {
  const store = new Store({ datacenter: 'dc1' });
  let index = 1;
  for (let i = 0; i < n; i++) {
    const node = `node-${String(i).padStart(6, '0')}`;
    store.apply(index++, {
      type: 'catalog.register',
      req: {
        Node: node,
        Address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`,
        Service: { ID: 'web-1', Service: 'web', Port: 8080, Tags: ['v1'], Meta: { ver: '1' } },
        Check: { CheckID: 'web-alive', Name: 'web alive', Status: 'passing', ServiceID: 'web-1', Output: 'HTTP GET /health: 200 OK' },
      },
    });
    store.apply(index++, { type: 'kv.apply', op: { Verb: 'set', Key: `app/${String(i).padStart(6, '0')}/config`, Value: Buffer.from(`value ${i}`), Flags: 0 } });
  }
  const health = [];
  const kv = [];
  const healthBuild = () => timed(() => store.healthService('web', {}).value);
  const kvBuild = () => timed(() => kvReads['kv.get']({ store, authz: readsAll }, { key: 'app/', mode: 'recurse' }).value);
  const firstHealth = healthBuild();
  const firstKv = kvBuild();
  for (let r = 0; r < RUNS; r++) {
    const i = Math.floor(Math.random() * n);
    const node = `node-${String(i).padStart(6, '0')}`;
    store.apply(index++, { type: 'catalog.register', req: { Node: node, SkipNodeUpdate: true, Check: { CheckID: 'web-alive', Name: 'web alive', Status: 'passing', ServiceID: 'web-1', Output: `run ${r}` } } });
    store.apply(index++, { type: 'kv.apply', op: { Verb: 'set', Key: `app/${String(i).padStart(6, '0')}/config`, Value: Buffer.from(`run ${r}`), Flags: 0 } });
    health.push(healthBuild());
    kv.push(kvBuild());
  }
  const first = (name, r) => `${name} n=${n} first build ${r.ms.toFixed(1)} ms (cpu ${r.cpuMs.toFixed(1)})`;
  console.log(first('HEALTH-SERVICE', firstHealth));
  console.log(first('KV-RECURSE', firstKv));
  if (health[0].value.length !== n || kv[0].value.length !== n) throw new Error('wrong answer size');
  console.log(summary('HEALTH-SERVICE after a write', n, health));
  console.log(summary('KV-RECURSE after a write', n, kv));
}
