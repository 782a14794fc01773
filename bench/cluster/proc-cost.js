// What a cell of the write matrix costs the servers' processes (issue #30: "threads and context
// switches per write"), read from /proc as pidstat reads it, for every thread of every server:
//   threads          — the most threads any server had during the cell;
//   csw              — context switches (voluntary + involuntary) per request, all servers;
//   cpu_us           — CPU time per request, all servers (schedstat: time on a CPU);
//   runq_us          — time per request the servers' threads were ready to run and waiting for a
//                      CPU (schedstat's run-queue wait): what a busy host adds to a write's latency.
// Per-thread figures come from /proc/<pid>/task/<tid>/{status,schedstat}; a thread that ended during
// the cell is missed (its counts go with it), one that started counts from zero.
'use strict';
const { readdirSync, readFileSync } = require('node:fs');

function readTask(pid, tid) {
  try {
    const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    const [onCpuNs, waitNs] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { csw: field('voluntary_ctxt_switches') + field('nonvoluntary_ctxt_switches'), onCpuNs, waitNs };
  } catch {
    return null; // the thread ended between the listing and the read
  }
}

/** Per thread of each pid: its counters now. */
function sample(pids) {
  const tasks = new Map();
  const threads = [];
  for (const pid of pids) {
    let tids = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      // the process is gone: it counts nothing
    }
    threads.push(tids.length);
    for (const tid of tids) {
      const t = readTask(pid, tid);
      if (t) tasks.set(`${pid}/${tid}`, t);
    }
  }
  return { tasks, threads: Math.max(0, ...threads) };
}

/** The cost of what ran between two samples, per request; fields for a RESULT line. */
function costPerRequest(before, after, requests) {
  let csw = 0;
  let onCpuNs = 0;
  let waitNs = 0;
  for (const [key, t] of after.tasks) {
    const b = before.tasks.get(key) ?? { csw: 0, onCpuNs: 0, waitNs: 0 };
    csw += t.csw - b.csw;
    onCpuNs += t.onCpuNs - b.onCpuNs;
    waitNs += t.waitNs - b.waitNs;
  }
  const per = (x) => (requests > 0 ? x / requests : NaN);
  return {
    threads: Math.max(before.threads, after.threads),
    csw: per(csw).toFixed(2),
    cpu_us: per(onCpuNs / 1000).toFixed(0),
    runq_us: per(waitNs / 1000).toFixed(0),
  };
}

module.exports = { sample, costPerRequest };
