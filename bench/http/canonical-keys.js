#!/usr/bin/env node
// The renaming of a request body's keys to the schema's spelling (packages/server/src/schemas/
// canonical-keys.ts) for one `PUT /v1/catalog/register` body, in process: ns per call, median of
// five runs of 100,000 after a warm-up. Pass another built tree's root to compare two versions.
//   npx tsc -b packages/cli && node bench/http/canonical-keys.js [root]
'use strict';
const { resolve } = require('node:path');

const root = resolve(process.argv[2] ?? resolve(__dirname, '..', '..'));
const { canonicalKeys } = require(`${root}/packages/server/dist/schemas/canonical-keys.js`);
const { registerSchema } = require(`${root}/packages/server/dist/schemas/catalog.js`);
const body = {
  node: 'web-1',
  Address: '10.0.0.1',
  Service: { Service: 'web', Port: 80, Tags: ['a'], Meta: { x: '1' } },
  Check: { CheckID: 'c', Status: 'passing' },
  NodeMeta: { a: 'b' },
};
for (let i = 0; i < 20_000; i++) canonicalKeys(body, registerSchema);
const runs = [];
for (let r = 0; r < 5; r++) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < 100_000; i++) canonicalKeys(body, registerSchema);
  runs.push(Number(process.hrtime.bigint() - t) / 100_000);
}
runs.sort((a, b) => a - b);
console.log(`canonicalKeys, one register body: ${runs[2].toFixed(0)} ns per call (runs ${runs.map((n) => n.toFixed(0)).join(', ')})`);
