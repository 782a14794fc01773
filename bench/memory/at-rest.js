#!/usr/bin/env node
// Memory of an idle server (issue #30): an empty -dev server, the same with 1,000 services in its
// catalog, and each server of an empty 3-server cluster. Each agent runs with report.js preloaded
// (and --expose-gc, which only adds global.gc); after the agent has settled for --settle seconds it
// is asked (SIGUSR2) for its memory as it stands and after a full GC. PSS comes from
// /proc/<pid>/smaps_rollup: RSS with the pages shared with other processes (the node binary's
// code) divided among them. Prints a markdown table (docs/benchmarks.md, "Memory at rest").
//
//   node bench/memory/at-rest.js [--settle 10] [--services 1000] [--only dev|services|cluster]
//                                [--node-options "<more node flags for the agents, e.g. --max-semi-space-size=2>"]
'use strict';
const { spawn } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync, existsSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { freePort, loopbackCaller, sleep, startCluster } = require('../support.js');

const REPO = join(__dirname, '..', '..');
const BIN = process.env.REGISTRY_BIN || join(REPO, 'node_modules', '.bin', 'registry');
const REPORT_JS = join(__dirname, 'report.js');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SETTLE_S = Number(arg('settle', '10'));
const SERVICES = Number(arg('services', '1000'));
const ONLY = arg('only', '');

const call = loopbackCaller({ maxSockets: 16, timeoutMs: 10_000 });
const nodeOptions = `--require ${REPORT_JS} --expose-gc ${arg('node-options', '')}`.trim();

function pssMiB(pid) {
  const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 102.4) / 10 : NaN;
}

/** Ask agent `pid` for its report (it appends one JSON line to `file`) and add its PSS. */
async function report(pid, file) {
  const before = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
  const pss = pssMiB(pid);
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 100; i++) {
    await sleep(100);
    const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    const mine = lines.slice(before).map((l) => JSON.parse(l)).find((r) => r.pid === pid);
    if (mine) return { ...mine, pss, pssAfterGc: pssMiB(pid) };
  }
  throw new Error(`no memory report from ${pid}`);
}

async function waitLeader(url) {
  for (let i = 0; i < 300; i++) {
    try {
      const r = await call(url, 'GET', '/v1/status/leader');
      if (r.status === 200 && r.body.toString() !== '""') return;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  throw new Error(`${url}: no leader in 30 s`);
}

async function devServer(dir) {
  const [http, dns, server] = [await freePort(), await freePort(), await freePort()];
  const file = join(dir, 'report.jsonl');
  const child = spawn(BIN, ['agent', '-dev', '-http-port', String(http), '-dns-port', String(dns), '-server-port', String(server)], {
    env: { ...process.env, NODE_OPTIONS: nodeOptions, MEMORY_REPORT: file },
    stdio: 'ignore',
  });
  const exited = new Promise((r) => child.on('exit', r));
  const url = `http://127.0.0.1:${http}`;
  await waitLeader(url);
  return {
    url,
    report: () => report(child.pid, file),
    stop: async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      child.kill('SIGKILL');
    },
  };
}

async function registerServices(url, n) {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const body = JSON.stringify({ Node: `node-${i}`, Address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, Service: { Service: `svc-${i}`, Port: 8000 + (i % 1000), Tags: ['v1'] } });
      const r = await call(url, 'PUT', '/v1/catalog/register', body);
      if (r.status !== 200) throw new Error(`register ${i}: ${r.status} ${r.body}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

const rows = [];
function row(name, r) {
  const a = r.asIs;
  const g = r.afterGc ?? {};
  rows.push(
    `| ${name} | ${a.rss} | ${g.rss} | ${r.pss} → ${r.pssAfterGc} | ${a.rssAnon} / ${a.rssFile} | ${a.heapUsed} / ${a.heapTotal} → ${g.heapUsed} / ${g.heapTotal} | ${a.spaces.new_space[1]} | ${a.external} | ${a.code} | ${r.modules} (${r.nodeModules}) | ${r.threads} |`,
  );
  console.error(`${name}: ${JSON.stringify(r)}`);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'registry-memory-'));
  try {
    if (!ONLY || ONLY === 'dev' || ONLY === 'services') {
      const a = await devServer(dir);
      try {
        if (!ONLY || ONLY === 'dev') {
          await sleep(SETTLE_S * 1000);
          row('empty -dev server', await a.report());
        }
        if (!ONLY || ONLY === 'services') {
          await registerServices(a.url, SERVICES);
          await sleep(SETTLE_S * 1000);
          row(`-dev server, ${SERVICES.toLocaleString('en')} services`, await a.report());
        }
      } finally {
        await a.stop();
      }
    }
    if (!ONLY || ONLY === 'cluster') {
      process.env.BENCH_CLUSTER_NODE_OPTIONS = nodeOptions;
      const file = join(dir, 'cluster-report.jsonl');
      process.env.MEMORY_REPORT = file;
      const c = await startCluster({ call, prefix: 'registry-memory-cluster-', warm: { path: '/v1/kv/warm', body: 'x' } });
      try {
        await sleep(SETTLE_S * 1000);
        const leader = c.leader();
        for (const i of [0, 1, 2]) row(`3-server cluster, s${i + 1} (${i === leader ? 'leader' : 'follower'})`, await report(c.pid(i), file));
      } finally {
        c.stop();
      }
    }
  } finally {
    call.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`settled ${SETTLE_S} s; MiB; "→": before → after a full GC; modules: loaded (of them from node_modules)`);
  console.log('| agent | RSS | RSS after GC | PSS | RSS anon / file | heap used / total | new space committed | external | code | modules | threads |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
