#!/usr/bin/env node
'use strict';
require('../dist/main.js').main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`registry: ${err && err.message ? err.message : err}\n`);
  process.exit(1);
});
