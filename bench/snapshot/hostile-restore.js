#!/usr/bin/env node
// bench/snapshot/hostile-restore: what a hostile `PUT /v1/snapshot` may cost a server (issue 33,
// findings 2 and 3), against one real server process (ACLs on, default deny), with its budgets:
//   - two anonymous 200 MiB bodies: each refused with 403, and the server's RSS (VmRSS of its
//     /proc/<pid>/status) grows by less than 32 MiB over both;
//   - every hostile archive kind of hostile-archives.js (management token): refused with 400 and
//     its reason in under 1 s, and the server then still serves a write and a read.
// Usage: npx tsc -b packages/cli && node bench/snapshot/hostile-restore.js [--mib 200] [--rounds 3]
// Bounded: 2 large bodies, `rounds` passes over the hostile kinds; every request has a 60 s timeout.
// Exits 1 if a budget is not met.
'use strict';
const { spawn } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync, writeFileSync, openSync } = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const { join } = require('node:path');
const { freePort, sleep } = require('../support');
const { hostileArchives } = require('./hostile-archives');

const REPO = join(__dirname, '..', '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const MIB = opt('mib', 200);
const ROUNDS = Math.min(opt('rounds', 3), 20);
const MGMT = 'b3nch000-0000-4000-8000-00000000517a';
const RSS_BUDGET = 32 * 1024 * 1024;
const REFUSAL_BUDGET_MS = 1_000;

/** A request with a Buffer body or `{ zeros: n }` streamed 1 MiB at a time; stops sending once answered. */
function call(port, method, path, body, headers = {}) {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    let answered = false;
    const agent = new http.Agent({ keepAlive: true });
    const length = body === undefined ? 0 : Buffer.isBuffer(body) ? body.length : body.zeros;
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, timeout: 60_000, headers: { ...headers, 'Content-Length': String(length) } }, (res) => {
      answered = true;
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        agent.destroy();
        resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString(), body: Buffer.concat(chunks), ms: Date.now() - started });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', (err) => {
      agent.destroy();
      if (!answered) reject(err);
    });
    if (body === undefined || Buffer.isBuffer(body)) return void req.end(body);
    const chunk = Buffer.alloc(1 << 20);
    let sent = 0;
    const pump = () => {
      while (sent < length && !answered && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (sent >= length) req.end();
    };
    pump();
  });
}

function rss(pid) {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}

const mib = (b) => (b / (1 << 20)).toFixed(1);

async function main() {
  console.log(`# ${new Date().toISOString()} node ${process.version}, ${os.cpus().length} cores, load average: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-hostile-restore-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: MGMT } } }));
  const [httpPort, serverPort] = [await freePort(), await freePort()];
  const log = openSync(join(dir, 'agent.log'), 'a');
  const child = spawn(
    process.execPath,
    [join(REPO, 'packages/cli/bin/registry.js'), 'agent', '-server', '-bootstrap-expect', '1', '-node', 'bench', '-data-dir', join(dir, 'data'), '-config-file', join(dir, 'config.json'), '-dns-port', '-1', '-http-port', String(httpPort), '-server-port', String(serverPort)],
    { stdio: ['ignore', log, log] },
  );
  const mgmt = { 'X-Registry-Token': MGMT };
  let failed = false;
  try {
    for (let i = 0; ; i++) {
      if (i > 300) throw new Error('the server did not come up in 30 s');
      const r = await call(httpPort, 'GET', '/v1/acl/token/self', undefined, mgmt).catch(() => null);
      if (r && r.status === 200) break;
      await sleep(100);
    }
    await call(httpPort, 'PUT', '/v1/kv/bench', Buffer.from('x'), mgmt);
    const good = (await call(httpPort, 'GET', '/v1/snapshot', undefined, mgmt)).body;

    console.log(`\n## Two anonymous ${MIB} MiB PUT /v1/snapshot (budget: 403 each, RSS growth < ${mib(RSS_BUDGET)} MiB)\n`);
    console.log('| request | status | ms | server RSS after (MiB) |');
    console.log('|---|---|---|---|');
    const before = rss(child.pid);
    console.log(`| before | | | ${mib(before)} |`);
    for (let i = 1; i <= 2; i++) {
      const r = await call(httpPort, 'PUT', '/v1/snapshot', { zeros: MIB * 1024 * 1024 });
      console.log(`| anonymous #${i} | ${r.status} | ${r.ms} | ${mib(rss(child.pid))} |`);
      if (r.status !== 403) failed = true;
    }
    await sleep(200);
    const grown = rss(child.pid) - before;
    const rssOk = grown < RSS_BUDGET;
    console.log(`\nRSS growth: ${mib(grown)} MiB — ${rssOk ? 'within budget' : 'OVER BUDGET'}`);
    if (!rssOk) failed = true;

    console.log(`\n## Hostile archives, ${ROUNDS} rounds (budget: 400 with its reason in < ${REFUSAL_BUDGET_MS} ms; the server serves after each)\n`);
    console.log('| kind | archive bytes | status | worst ms | reason |');
    console.log('|---|---|---|---|---|');
    const kinds = hostileArchives(good);
    const worst = new Map();
    const answers = new Map();
    for (let round = 0; round < ROUNDS; round++) {
      for (const { kind, archive, reason } of kinds) {
        const r = await call(httpPort, 'PUT', '/v1/snapshot', archive, mgmt);
        const ok = r.status === 400 && r.text.includes(reason) && r.ms < REFUSAL_BUDGET_MS;
        if (!ok) failed = true;
        worst.set(kind, Math.max(worst.get(kind) ?? 0, r.ms));
        answers.set(kind, `${r.status}${ok ? '' : ' (FAILED)'}|${r.text.slice(0, 110)}`);
        const probe = await call(httpPort, 'PUT', `/v1/kv/probe`, Buffer.from(String(round)), mgmt);
        if (probe.status !== 200) failed = true;
      }
    }
    for (const { kind, archive } of kinds) {
      const [status, text] = answers.get(kind).split('|');
      console.log(`| ${kind} | ${archive.length} | ${status} | ${worst.get(kind)} | ${text.replace(/\|/g, '\\|')} |`);
    }
    const alive = child.exitCode === null;
    const read = await call(httpPort, 'GET', '/v1/kv/probe?raw', undefined, mgmt);
    console.log(`\nServer alive: ${alive}; last write read back: ${read.text === String(ROUNDS - 1)}; RSS now ${mib(rss(child.pid))} MiB`);
    if (!alive || read.text !== String(ROUNDS - 1)) failed = true;
    console.log(`\nResult: ${failed ? 'BUDGET NOT MET' : 'every budget met'}`);
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
