// The runner of a check that probes on an interval (HTTP, TCP, gRPC, Docker, script): the probe of
// its kind, run every interval — never more often than the agent's floor — within the
// agent's limit of probes in flight (check-runner.ts).
import type { ProbeResult } from './check-output';
import { startIntervalRunner, type Runner } from './check-runner';
import type { CheckKind } from './check-spec';
import type { ConcurrencyLimit } from './concurrency-limit';
import { grpcProbe } from './grpc-probe';
import { httpProbe, tcpProbe } from './probes';
import { dockerProbe, scriptProbe } from './script-probe';

type ProbeKind = Exclude<CheckKind, { type: 'ttl' } | { type: 'alias' }>;

export function startProbeRunner(
  kind: ProbeKind,
  opts: { intervalMinMs: number; limiter: ConcurrencyLimit; failed: (err: unknown) => void },
  onResult: (r: ProbeResult) => void,
): Runner {
  // Stopping the check also ends a command it is running (and what that command started).
  const stopped = new AbortController();
  const probe =
    kind.type === 'http' ? () => httpProbe(kind)
    : kind.type === 'tcp' ? () => tcpProbe(kind)
    : kind.type === 'grpc' ? () => grpcProbe(kind)
    : kind.type === 'docker' ? () => dockerProbe(kind, stopped.signal)
    : () => scriptProbe(kind, stopped.signal);
  const interval = Math.max(kind.intervalMs, opts.intervalMinMs);
  const runner = startIntervalRunner(interval, probe, onResult, opts.limiter, opts.failed);
  return {
    stop() {
      runner.stop();
      stopped.abort();
    },
  };
}
