// A CPU profile of a whole process, for a server that scripts/cluster.sh starts (Node refuses
// `--cpu-prof` in NODE_OPTIONS, but takes `--require`): NODE_OPTIONS="--require <this file>" with
// CPU_PROF_DIR=<folder> writes <folder>/<pid>.cpuprofile when the process exits (the in-thread
// inspector session answers synchronously, so an 'exit' handler can still collect it).
// With CPU_PROF_ON_SIGNAL=1 nothing is profiled until the process gets SIGUSR2; the next SIGUSR2 (or
// the exit) writes <folder>/<pid>-<n>.cpuprofile: a profile of one stretch of a long-running server
// (a leader while it sends a snapshot).
'use strict';
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.CPU_PROF_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  let running = false;
  let n = 0;
  const start = () => {
    running = true;
    session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.start')));
  };
  const stop = (name) => {
    if (!running) return;
    running = false;
    session.post('Profiler.stop', (err, r) => {
      if (!err) writeFileSync(join(dir, name), JSON.stringify(r.profile));
    });
  };
  if (process.env.CPU_PROF_ON_SIGNAL === '1') {
    process.on('SIGUSR2', () => (running ? stop(`${process.pid}-${++n}.cpuprofile`) : start()));
    process.on('exit', () => stop(`${process.pid}-${++n}.cpuprofile`));
  } else {
    start();
    process.on('exit', () => stop(`${process.pid}.cpuprofile`));
  }
}
