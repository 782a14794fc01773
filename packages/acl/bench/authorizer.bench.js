/* eslint-disable */
// Times Authorizer checks for a token with 50 policies × 20 rules.
// Run after `npx tsc -b packages/acl`:  node packages/acl/bench/authorizer.bench.js
'use strict';
const { Authorizer, parseRules, TokenResolver } = require('../dist');

const kinds = ['service', 'service_prefix', 'node', 'node_prefix', 'key_prefix', 'key'];
const access = ['read', 'write', 'deny'];
const policies = [];
for (let p = 0; p < 50; p++) {
  const lines = [];
  for (let r = 0; r < 20; r++) {
    const kind = kinds[(p * 20 + r) % kinds.length];
    lines.push(`${kind} "team-${p}/svc-${r}" { policy = "${access[(p + r) % 3]}" }`);
  }
  policies.push(lines.join('\n'));
}

let t0 = process.hrtime.bigint();
const parsed = policies.map(parseRules);
const parseMs = Number(process.hrtime.bigint() - t0) / 1e6;

t0 = process.hrtime.bigint();
const a = new Authorizer(parsed, 'deny');
const buildMs = Number(process.hrtime.bigint() - t0) / 1e6;

const names = [];
for (let i = 0; i < 1000; i++) names.push(`team-${i % 60}/svc-${i % 25}${i % 3 === 0 ? '-x' : ''}`);

function time(label, fn) {
  for (let i = 0; i < 200000; i++) fn(names[i % names.length]); // warm up
  const n = 2000000;
  const start = process.hrtime.bigint();
  let granted = 0;
  for (let i = 0; i < n; i++) if (fn(names[i % names.length])) granted++;
  const ns = Number(process.hrtime.bigint() - start) / n;
  console.log(`${label.padEnd(22)} ${ns.toFixed(1)} ns/check (${granted} granted)`);
}

console.log(`parse 50 policies: ${parseMs.toFixed(1)} ms; build Authorizer: ${buildMs.toFixed(2)} ms`);
time('serviceRead', (n) => a.serviceRead(n));
time('serviceWrite', (n) => a.serviceWrite(n));
time('nodeRead', (n) => a.nodeRead(n));
time('keyWritePrefix', (n) => a.keyWritePrefix(n));

const resolver = new TokenResolver(
  {
    tokenBySecret: (s) => (s === 'tok' ? { Policies: policies.map((_, i) => ({ ID: `p${i}` })) } : undefined),
    policyById: (id) => ({ Rules: policies[Number(id.slice(1))] }),
  },
  { datacenter: 'dc1', defaultPolicy: 'deny' },
);
resolver.resolve('tok');
time('resolve (cached)', () => resolver.resolve('tok') !== 'not-found');
