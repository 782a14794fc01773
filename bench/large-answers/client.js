#!/usr/bin/env node
// One side of bench/large-answers' write phase, in its own process (run.js starts it):
//   node client.js writers <url> <seconds> <connections>   closed-loop PUT /v1/catalog/register
//   node client.js reader  <url> <seconds>                 one closed loop of GET /v1/catalog/nodes
// Prints one JSON line with its counts and its own CPU time. Writers and reader were one process
// before: 15 MB answers arriving in 64 KB pieces held that process's loop between the writers'
// requests, so the figure measured the client as much as the server.
'use strict';
const http = require('node:http');

const [role, base, seconds, connections] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function call(method, path, body, timeoutMs) {
  const url = new URL(path, base);
  if (url.hostname !== '127.0.0.1') throw new Error(`refusing non-loopback target ${base}`);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, timeout: timeoutMs }, (res) => {
      let bytes = 0;
      res.on('data', (c) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode, bytes }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

let written = 0;
/**
 * register.lua's shape (a random one of 10,000 nodes with one service), but every write changes its
 * node (Meta.written): an identical re-registration is a no-op in the store, and then a reader of
 * the node listing would never see a change — the easy case, not the one the issue is about.
 */
function registerBody() {
  const n = Math.floor(Math.random() * 10000);
  const node = `bench-${String(n).padStart(4, '0')}`;
  return JSON.stringify({ Node: node, Address: `10.1.${n >> 8}.${n & 255}`, NodeMeta: { written: `${process.pid}-${written++}` }, Service: { Service: 'bench', Port: 8080, Tags: ['v1'] } });
}

(async () => {
  const until = Date.now() + Number(seconds) * 1000;
  const cpu0 = process.cpuUsage();
  const out = { role, done: 0, failed: 0, worstMs: 0, totalMs: 0, bytes: 0 };
  const loop = async (method, path, body, timeoutMs) => {
    while (Date.now() < until) {
      const t0 = Date.now();
      try {
        const r = await call(method, path, body?.(), timeoutMs);
        if (r.status === 200) {
          out.done++;
          out.bytes += r.bytes;
        } else out.failed++;
      } catch {
        out.failed++;
      }
      const ms = Date.now() - t0;
      out.worstMs = Math.max(out.worstMs, ms);
      out.totalMs += ms;
    }
  };
  if (role === 'writers') await Promise.all(Array.from({ length: Number(connections) }, () => loop('PUT', '/v1/catalog/register', registerBody, 10_000)));
  else if (role === 'reader') await loop('GET', '/v1/catalog/nodes', undefined, 60_000);
  else throw new Error(`unknown role ${role}`);
  const cpu = process.cpuUsage(cpu0);
  out.cpuMs = Math.round((cpu.user + cpu.system) / 1000);
  agent.destroy();
  console.log(JSON.stringify(out));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
