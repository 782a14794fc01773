// process_cpu_user_seconds_total, process_cpu_system_seconds_total, process_cpu_seconds_total:
// prom-client's lib/metrics/processCpuTotal.js (15.1.3) without its exemplar branch, which is what
// requires @opentelemetry/api (prom-client-parts.ts says why that matters). Same names, help, order
// and values: one collect() reads process.cpuUsage() and advances all three.
import type * as PromClient from 'prom-client';

export function processCpuTotal(registry: PromClient.Registry): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Counter = require('prom-client/lib/counter') as typeof PromClient.Counter;
  const registers = [registry];
  let last = process.cpuUsage();
  const user = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers,
    // This one metric's collect sets all three, as prom-client's does.
    collect() {
      const now = process.cpuUsage();
      const userMicros = now.user - last.user;
      const systemMicros = now.system - last.system;
      last = now;
      user.inc(userMicros / 1e6);
      system.inc(systemMicros / 1e6);
      total.inc((userMicros + systemMicros) / 1e6);
    },
  });
  const system = new Counter({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', registers });
  const total = new Counter({ name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', registers });
}
