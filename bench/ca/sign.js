#!/usr/bin/env node
/**
 * Leaf-signing throughput of @registry/ca (the server-side cost of
 * GET /v1/agent/connect/ca/leaf/:service on a cache miss).
 *   npx tsc -b packages/ca && node bench/ca/sign.js [seconds=2]
 * "signLeaf" = parse + verify a CSR + build + sign the leaf (what the leader does);
 * "signLeafForService" adds the agent's work: a fresh key and CSR per leaf.
 * CSRs for the first measure are made beforehand and reused round-robin.
 */
'use strict';
const path = require('node:path');
const ca = require(path.join(__dirname, '../../packages/ca/dist'));

const seconds = Number(process.argv[2] ?? 2);
if (!(seconds > 0 && seconds <= 60)) throw new Error('seconds must be in (0, 60]');
const CLUSTER = '11111111-2222-3333-4444-555555555555';
const TD = ca.trustDomainFor(CLUSTER);

function measure(label, fn) {
  for (let i = 0; i < 50; i++) fn(i); // warm-up: JIT and the root cache
  const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  const start = process.hrtime.bigint();
  let n = 0;
  while (process.hrtime.bigint() < deadline) fn(n++);
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  const rate = n / elapsed;
  console.log(`${label.padEnd(40)} ${rate.toFixed(0).padStart(6)} leaves/s  (${n} in ${elapsed.toFixed(2)} s, ${(1000 / rate).toFixed(3)} ms each)`);
  return rate;
}

let serial = 1;
const results = [];
for (const keyType of ['ec', 'rsa']) {
  const root = ca.generateRoot({ clusterId: CLUSTER, keyType, serial: serial++ });
  const csrs = Array.from({ length: 64 }, (_, i) => ca.createCSR({ uri: ca.serviceURI(TD, 'dc1', `svc-${i}`) }).csrPEM);
  results.push(measure(`signLeaf, ${keyType} root, EC P-256 CSR`, (i) => ca.signLeaf({ root, csrPEM: csrs[i % csrs.length], serial: serial++ })));
  results.push(measure(`signLeafForService, ${keyType} root`, (i) => ca.signLeafForService({ root, service: `svc-${i % 64}`, dc: 'dc1', serial: serial++ })));
}
const target = 500;
const worst = Math.min(...results);
console.log(`slowest ${worst.toFixed(0)} leaves/s; target >= ${target}/s: ${worst >= target ? 'met' : 'NOT met'}`);
