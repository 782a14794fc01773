// prom-client as the agent uses it: the Registry, Counter and Gauge classes and the default
// metrics, required from the package's own files rather than its index. The index also loads
// Histogram, Summary (with its t-digest), Pushgateway, the cluster aggregator and, through the
// process CPU counters' exemplar support, @opentelemetry/api — 88 modules, ~1.5 MiB of heap, where
// these need ~20 (issue #30, memory at rest). The version is pinned (docs/dependencies.md); the
// classes are the very ones the index exports.
import type * as PromClient from 'prom-client';
import { processCpuTotal } from './process-cpu-total';

/* eslint-disable @typescript-eslint/no-require-imports */
export const Registry = require('prom-client/lib/registry') as typeof PromClient.Registry;
export const Counter = require('prom-client/lib/counter') as typeof PromClient.Counter;
export const Gauge = require('prom-client/lib/gauge') as typeof PromClient.Gauge;
export type Registry = PromClient.Registry;
export type Counter<T extends string = string> = PromClient.Counter<T>;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;

type DefaultMetric = (registry: PromClient.Registry, config: Record<string, unknown>) => void;
const metric = (name: string) => require(`prom-client/lib/metrics/${name}`) as DefaultMetric;
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * prom-client's collectDefaultMetrics (lib/defaultMetrics.js, 15.1.3): the same metrics, in the same
 * order, with the same default config; only the process CPU counters are this package's copy
 * without exemplars (their only use of @opentelemetry/api), which the agent never enabled.
 */
export function collectDefaultMetrics(registry: PromClient.Registry): void {
  const config = { eventLoopMonitoringPrecision: 10, register: registry };
  const metrics: DefaultMetric[] = [
    processCpuTotal,
    metric('processStartTime'),
    metric('osMemoryHeap'),
    metric('processOpenFileDescriptors'),
    metric('processMaxFileDescriptors'),
    metric('eventLoopLag'),
    ...(typeof process.getActiveResourcesInfo === 'function' ? [metric('processResources')] : []),
    metric('processHandles'),
    metric('processRequests'),
    metric('heapSizeAndUsed'),
    metric('heapSpacesSizeAndUsed'),
    metric('version'),
    metric('gc'),
  ];
  for (const m of metrics) m(registry, config);
}
