// Preload (`BENCH_CLUSTER_NODE_OPTIONS="-r $PWD/bench/cluster/loop-trace.js"`): finds what stalls a
// server's event loop. A 5 ms interval notes every gap longer than BENCH_LOOP_GAP_MS (default 20)
// together with the GC pauses that overlapped it; once a second the event-loop delay histogram
// (perf_hooks.monitorEventLoopDelay) is summarised. Lines go to $BENCH_LOOP_TRACE_DIR/loop-<pid>.txt:
//   GAP  t=<ms since start> at=<wall clock at its end, ISO> gap_ms=<n> cpu_ms=<n> wait_ms=<n> gc=<kind:ms,…>
//        (cpu/wait: the main thread's time on a CPU and waiting for one in the run queue during the
//        gap, from /proc/self/task/<pid>/schedstat — a gap mostly waiting is the machine, not us)
//   SEC  t=<ms> p50_ms p99_ms max_ms gc_ms=<total GC in that second> gcs=<count> rss_mb heap_mb
//   EXIT gaps=<n> worst_ms=<n> ... (the whole run's histogram)
// Written synchronously but only once a second (and at exit), so the tracer adds no stall itself.
'use strict';
const { monitorEventLoopDelay, PerformanceObserver, performance, constants } = require('node:perf_hooks');
const { appendFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');
const { mainThreadSchedMs } = require('../support');

// Only the servers: cluster.sh also runs short node helpers with the same NODE_OPTIONS.
if (process.argv[2] === 'agent') trace();

function trace() {
  const dir = process.env.BENCH_LOOP_TRACE_DIR || '.';
  const gapMs = Number(process.env.BENCH_LOOP_GAP_MS || 20);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `loop-${process.pid}.txt`);
  const t0 = performance.now();
  const kinds = {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incr',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak',
  };

  let lines = [`START pid=${process.pid} argv=${process.argv.slice(2).join(' ')}`];
  /** GC pauses of the last few seconds: [start, duration, kind]. */
  let gcs = [];
  let secGcMs = 0;
  let secGcs = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = kinds[e.detail?.kind ?? e.kind] ?? String(e.detail?.kind ?? e.kind);
      gcs.push([e.startTime, e.duration, kind]);
      secGcMs += e.duration;
      secGcs++;
    }
  }).observe({ entryTypes: ['gc'] });

  const whole = monitorEventLoopDelay({ resolution: 5 });
  const sec = monitorEventLoopDelay({ resolution: 5 });
  whole.enable();
  sec.enable();
  let gaps = 0;
  let worst = 0;
  /** Gaps not written yet (their GCs are still on the way to the observer). */
  const pending = new Set();
  let last = performance.now();
  let lastSched = mainThreadSchedMs();
  const ping = setInterval(() => {
    const now = performance.now();
    const gap = now - last;
    last = now;
    const before = lastSched;
    lastSched = mainThreadSchedMs();
    if (gap < gapMs) return;
    const onCpu = lastSched.cpuMs - before.cpuMs;
    const waiting = lastSched.waitMs - before.waitMs;
    gaps++;
    worst = Math.max(worst, gap);
    // The GCs of a gap that just ended reach the observer only after this callback (its entries are
    // delivered later, from the loop): written at once, a gap made by one collection listed none.
    const write = () => {
      const during = gcs.filter(([s, d]) => s + d >= now - gap && s <= now).map(([, d, k]) => `${k}:${d.toFixed(1)}`);
      lines.push(`GAP t=${(now - t0).toFixed(0)} at=${new Date(performance.timeOrigin + now).toISOString()} gap_ms=${gap.toFixed(1)} cpu_ms=${onCpu.toFixed(1)} wait_ms=${waiting.toFixed(1)} gc=${during.join(',') || '-'}`);
    };
    pending.add(write);
    setTimeout(() => pending.delete(write) && write(), 100).unref();
  }, 5);
  ping.unref();

  const flush = () => {
    if (lines.length) appendFileSync(file, lines.join('\n') + '\n');
    lines = [];
  };
  const ms = (ns) => (ns / 1e6).toFixed(1);
  const summary = setInterval(() => {
    const m = process.memoryUsage();
    lines.push(
      `SEC t=${(performance.now() - t0).toFixed(0)} p50_ms=${ms(sec.percentile(50))} p99_ms=${ms(sec.percentile(99))} max_ms=${ms(sec.max)} ` +
        `gc_ms=${secGcMs.toFixed(1)} gcs=${secGcs} rss_mb=${(m.rss / 2 ** 20).toFixed(0)} heap_mb=${(m.heapUsed / 2 ** 20).toFixed(0)}`,
    );
    sec.reset();
    secGcMs = 0;
    secGcs = 0;
    const cut = performance.now() - 5000;
    gcs = gcs.filter(([s]) => s >= cut);
    flush();
  }, 1000);
  summary.unref();

  process.on('exit', () => {
    for (const write of pending) write();
    lines.push(`EXIT gaps=${gaps} worst_ms=${worst.toFixed(1)} p50_ms=${ms(whole.percentile(50))} p99_ms=${ms(whole.percentile(99))} p999_ms=${ms(whole.percentile(99.9))} max_ms=${ms(whole.max)}`);
    flush();
  });
}
