// Preload (`NODE_OPTIONS=-r bench/cluster/cpu-profile.js`, since --cpu-prof is refused in
// NODE_OPTIONS): profiles the whole process with the inspector and writes
// $BENCH_CPU_PROF_DIR/cpu-<pid>.cpuprofile when it exits.
'use strict';
const inspector = require('node:inspector');
const { writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.BENCH_CPU_PROF_DIR || '.';
const session = new inspector.Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 1000 });
session.post('Profiler.start');
let written = false;
process.on('exit', () => {
  if (written) return;
  written = true;
  // The inspector answers synchronously on the main thread for a connected in-process session.
  session.post('Profiler.stop', (err, res) => {
    if (err) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `cpu-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
  });
});
