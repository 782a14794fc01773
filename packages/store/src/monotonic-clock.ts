// The store's clock for state that lives only in this process and is measured in durations — the
// KV lock-delays, kept per server as Consul keeps them (issue #36). Monotonic, so a wall-clock step
// neither frees a lock early nor holds it for an hour. Its own copy of @registry/raft's one-liner:
// the store does not depend on raft (docs/architecture.md).
import { performance } from 'node:perf_hooks';

/** Milliseconds on the monotonic clock. Only differences mean anything; never persist it. */
export function monotonicMs(): number {
  return performance.now();
}
