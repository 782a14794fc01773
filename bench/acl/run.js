#!/usr/bin/env node
// bench/acl: what authorization costs per read. Two dev-like agents (real processes, one at a
// time): ACLs off, and ACLs on with default deny and a token linking 50 policies of 20 rules each.
//   npx tsc -b packages/cli first, then: node bench/acl/run.js [--duration 2] [--bursts 6]
// Prints a markdown table of reads/s for GET /v1/health/service/web and GET /v1/catalog/nodes
// (both filtered per entry when ACLs are on). Every phase is bounded in time and count.
'use strict';
const { spawn } = require('node:child_process');
const { mkdtempSync, writeFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const autocannon = require('autocannon');
const { freePort, sleep } = require('../support');

const REPO = join(__dirname, '..', '..');
const arg = (name, dflt) => Number(process.argv[process.argv.indexOf(name) + 1]) || dflt;
const DURATION = arg('--duration', 2);
const BURSTS = arg('--bursts', 6);
const MASTER = 'b3nch000-0000-4000-8000-000000000001';
const POLICIES = 50;
const RULES_PER_POLICY = 20;
const NODES = 20;


async function call(base, method, path, body, token) {
  const headers = token ? { 'X-Registry-Token': token } : {};
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** 20 rules over services, nodes and keys; the first policy also grants the reads being measured. */
function policyRules(i) {
  const rules = [];
  if (i === 0) rules.push('node_prefix "" { policy = "read" }', 'service_prefix "" { policy = "read" }');
  for (let j = 0; rules.length < RULES_PER_POLICY; j++) {
    if (j % 3 === 0) rules.push(`service "svc-${i}-${j}" { policy = "write" }`);
    else if (j % 3 === 1) rules.push(`node_prefix "rack-${i}-${j}-" { policy = "write" }`);
    else rules.push(`key_prefix "app/${i}/${j}/" { policy = "read" }`);
  }
  return rules.join('\n');
}

async function startAgent(dir, acl) {
  const httpPort = await freePort();
  const serverPort = await freePort();
  const configFile = join(dir, `config-${acl ? 'on' : 'off'}.json`);
  const config = acl ? { acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: MASTER } } } : {};
  writeFileSync(configFile, JSON.stringify(config));
  const child = spawn(
    process.execPath,
    [join(REPO, 'packages/cli/bin/registry.js'), 'agent', '-server', '-bootstrap-expect', '1', '-node', 'bench',
      '-data-dir', join(dir, `data-${acl ? "on" : "off"}`), '-http-port', String(httpPort), '-server-port', String(serverPort),
      '-log-level', 'warn', '-config-file', configFile],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const base = `http://127.0.0.1:${httpPort}`;
  const token = acl ? MASTER : undefined;
  for (let i = 0; i < 200; i++) {
    try {
      await call(base, 'GET', '/v1/catalog/node/bench', undefined, token).then((n) => {
        if (!n) throw new Error('not yet');
      });
      break;
    } catch {
      await sleep(100);
    }
  }
  return { child, base, stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGINT'); setTimeout(() => child.kill('SIGKILL'), 5000); }) };
}

async function populate(agent, acl) {
  const token = acl ? MASTER : undefined;
  for (let i = 0; i < NODES; i++) {
    await call(agent.base, 'PUT', '/v1/catalog/register', {
      Node: `web-${i}`, Address: `10.0.0.${i}`,
      Service: { Service: 'web', Port: 80 },
      Check: { CheckID: 'web', Name: 'web', Status: 'passing', ServiceID: 'web' },
    }, token);
  }
  if (!acl) return undefined;
  const links = [];
  for (let i = 0; i < POLICIES; i++) {
    const p = await call(agent.base, 'PUT', '/v1/acl/policy', { Name: `bench-${i}`, Rules: policyRules(i) }, MASTER);
    links.push({ ID: p.ID });
  }
  const t = await call(agent.base, 'PUT', '/v1/acl/token', { Description: 'bench reader', Policies: links }, MASTER);
  return t.SecretID;
}

function cannon(url, token) {
  return new Promise((resolve, reject) => {
    autocannon(
      { url, connections: 32, duration: DURATION, headers: token ? { 'X-Registry-Token': token } : {} },
      (err, r) => (err ? reject(err) : resolve(r)),
    );
  });
}

const READS = ['/v1/health/service/web', '/v1/catalog/nodes'];

/**
 * The ACL work of one such read, measured in-process where the machine's noise cannot hide it:
 * the filter over 20 health entries with the 50-policy authorizer (the resolver's cache hit adds
 * ~25 ns), against the allow-all shortcut used when ACLs are off.
 */
function inProcess() {
  const { Authorizer, parseRules } = require(join(REPO, 'packages/acl/dist'));
  const { filterCheckServiceNodes, filterNodes } = require(join(REPO, 'packages/server/dist/acl/read-filters'));
  const authz = new Authorizer(Array.from({ length: POLICIES }, (_, i) => parseRules(policyRules(i))), 'deny');
  const entries = Array.from({ length: NODES }, (_, i) => ({ Node: { Node: `web-${i}` }, Service: { Service: 'web' }, Checks: [] }));
  const nodes = entries.map((e) => e.Node);
  const time = (fn, n = 200_000) => {
    for (let i = 0; i < 10_000; i++) fn();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    return Number(process.hrtime.bigint() - t0) / n / 1000;
  };
  const rows = [
    ['filter 20 health entries (node + service read each)', time(() => filterCheckServiceNodes(authz, entries)), time(() => filterCheckServiceNodes(Authorizer.allowAll(), entries))],
    ['filter 20 nodes (node read each)', time(() => filterNodes(authz, nodes)), time(() => filterNodes(Authorizer.allowAll(), nodes))],
  ];
  console.log('');
  console.log('| in-process, per read | ACLs on (50×20 rules) µs | ACLs off µs |');
  console.log('|---|---|---|');
  for (const [what, on, off] of rows) console.log(`| ${what} | ${on.toFixed(2)} | ${off.toFixed(3)} |`);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'registry-bench-acl-'));
  const agents = [];
  const totals = { off: {}, on: {} };
  try {
    // Both agents run at once and the load alternates between them in short bursts, so whatever
    // else the machine is doing falls on both sides alike.
    for (const acl of [false, true]) agents.push({ acl, agent: await startAgent(dir, acl) });
    for (const a of agents) {
      a.token = await populate(a.agent, a.acl);
      // Sanity: the reader sees everything it should (otherwise the comparison is meaningless).
      const seen = await call(a.agent.base, 'GET', READS[0], undefined, a.token);
      if (seen.length !== NODES) throw new Error(`${a.acl ? 'ACL' : 'plain'} agent shows ${seen.length} of ${NODES} instances`);
    }
    for (const path of READS) {
      for (let burst = 0; burst < BURSTS; burst++) {
        const order = burst % 2 === 0 ? agents : [...agents].reverse();
        for (const a of order) {
          const r = await cannon(a.agent.base + path, a.token);
          if (r.non2xx > 0 || r.errors > 0) throw new Error(`${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
          const key = a.acl ? 'on' : 'off';
          totals[key][path] = (totals[key][path] ?? 0) + r.requests.total;
        }
      }
    }
  } finally {
    for (const a of agents) await a.agent.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const seconds = BURSTS * DURATION;
  console.log(`| read (32 connections, ${BURSTS} alternating bursts of ${DURATION}s each side) | ACLs off reads/s | ACLs on reads/s | change |`);
  console.log('|---|---|---|---|');
  for (const path of READS) {
    const off = totals.off[path] / seconds;
    const on = totals.on[path] / seconds;
    console.log(`| GET ${path} (${NODES} entries) | ${off.toFixed(0)} | ${on.toFixed(0)} | ${(((on - off) / off) * 100).toFixed(1)} % |`);
  }
  inProcess();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
