// A CPU profile of a whole process, for a server that scripts/cluster.sh starts (Node refuses
// `--cpu-prof` in NODE_OPTIONS, but takes `--require`): NODE_OPTIONS="--require <this file>" with
// CPU_PROF_DIR=<folder> writes <folder>/<pid>.cpuprofile when the process exits (the in-thread
// inspector session answers synchronously, so an 'exit' handler can still collect it).
'use strict';
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.CPU_PROF_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.start')));
  process.on('exit', () => {
    session.post('Profiler.stop', (err, r) => {
      if (!err) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(r.profile));
    });
  });
}
