// Preloaded into an agent by a test (NODE_OPTIONS=--require …/module-list.js, MODULE_LIST=<file>):
// on SIGUSR2 it writes the paths of the modules the process has loaded, one a line, to MODULE_LIST.
'use strict';
const { renameSync, writeFileSync } = require('node:fs');

const out = process.env.MODULE_LIST;
if (out) {
  process.on('SIGUSR2', () => {
    writeFileSync(`${out}.tmp`, Object.keys(require.cache).join('\n') + '\n');
    renameSync(`${out}.tmp`, out);
  });
}
