// Preload (`NODE_OPTIONS=-r bench/cluster/cpu-profile.js`, or `--require`, since --cpu-prof is
// refused in NODE_OPTIONS): profiles the whole process with the inspector and writes
// $BENCH_CPU_PROF_DIR/cpu-<pid>.cpuprofile when it exits (the in-thread inspector session answers
// synchronously, so an 'exit' handler can still collect it).
//   BENCH_CPU_PROF_DIR          where profiles are written (default: the current directory)
//   BENCH_CPU_PROF_INTERVAL_US  sampling interval in µs (default 1000)
//   BENCH_CPU_PROF_ON_SIGNAL=1  profile nothing until the process gets SIGUSR2; the next SIGUSR2 (or
//                               the exit) writes $BENCH_CPU_PROF_DIR/cpu-<pid>-<n>.cpuprofile (n = 1,
//                               2, …): a profile of one stretch of a long-running server (a leader
//                               while it sends a snapshot). Any other value (e.g. '') is the
//                               whole-process mode.
// Read a profile with bench/cluster/stall-profile.js (busy stretches) or profile-diff.js.
'use strict';
const inspector = require('node:inspector');
const { writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.BENCH_CPU_PROF_DIR || '.';
const interval = Number(process.env.BENCH_CPU_PROF_INTERVAL_US) || 1000;
const session = new inspector.Session();
session.connect();

if (process.env.BENCH_CPU_PROF_ON_SIGNAL === '1') {
  let running = false;
  let n = 0;
  const start = () => {
    running = true;
    session.post('Profiler.enable');
    session.post('Profiler.setSamplingInterval', { interval });
    session.post('Profiler.start');
  };
  const stop = () => {
    if (!running) return;
    running = false;
    const name = `cpu-${process.pid}-${++n}.cpuprofile`;
    session.post('Profiler.stop', (err, res) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, name), JSON.stringify(res.profile));
    });
  };
  process.on('SIGUSR2', () => (running ? stop() : start()));
  process.on('exit', stop);
} else {
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval });
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
}
