// The JSON form of /v1/agent/metrics in Consul's shape (go-metrics' InmemSink.DisplayMetrics):
// Timestamp of the interval shown, Gauges, Points, Counters and Samples, each sorted by name.
import { INTERVAL_MS, type IntervalClock, type IntervalValues } from './interval-aggregate';
import type { JsonCatalog, JsonCell, Labels } from './series';

export interface GaugeOut {
  Name: string;
  Value: number;
  Labels: Labels;
}

/** go-metrics' SampledValue. */
export interface SampledOut {
  Name: string;
  Count: number;
  Rate: number;
  Sum: number;
  Min: number;
  Max: number;
  Mean: number;
  Stddev: number;
  Labels: Labels;
}

export interface MetricsSummary {
  Timestamp: string;
  Gauges: GaugeOut[];
  Points: unknown[];
  Counters: SampledOut[];
  Samples: SampledOut[];
}

/**
 * `hostPrefix` is what go-metrics puts after the service name in gauge names when the hostname
 * is not disabled (`registry.` → `registry.<host>.`); '' keeps them as they are.
 */
export function consulSummary(catalog: JsonCatalog, clock: IntervalClock, hostPrefix: string): MetricsSummary {
  const epoch = clock.shownEpoch();
  const gauges: GaugeOut[] = [];
  for (const g of catalog.gauges) {
    const name = hostPrefix ? g.name.replace(/^registry\./, `registry.${hostPrefix}.`) : g.name;
    for (const v of g.read()) gauges.push({ Name: name, Value: v.value, Labels: { ...v.labels } });
  }
  return {
    Timestamp: goTime(epoch * INTERVAL_MS),
    Gauges: gauges.sort(byName),
    Points: [],
    Counters: sampled(catalog.counters, epoch).sort(byName),
    Samples: sampled(catalog.samples, epoch).sort(byName),
  };
}

function sampled(cells: JsonCell[], epoch: number): SampledOut[] {
  const out: SampledOut[] = [];
  for (const c of cells) {
    const v = c.agg.at(epoch);
    if (v) out.push(sampledValue(c.name, c.labels, v));
  }
  return out;
}

function sampledValue(name: string, labels: Labels, v: IntervalValues): SampledOut {
  const mean = v.sum / v.count;
  // go-metrics' sample standard deviation (n - 1), 0 for a single value.
  const variance = v.count > 1 ? (v.sumSq - (v.sum * v.sum) / v.count) / (v.count - 1) : 0;
  return {
    Name: name,
    Count: v.count,
    Rate: v.sum / (INTERVAL_MS / 1000),
    Sum: v.sum,
    Min: v.min,
    Max: v.max,
    Mean: mean,
    Stddev: Math.sqrt(Math.max(0, variance)),
    Labels: { ...labels },
  };
}

function byName<T extends { Name: string }>(a: T, b: T): number {
  return a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0;
}

/** Go's time.Time.String() of a UTC time, as Consul prints the interval: `2019-01-02 03:04:05 +0000 UTC`. */
export function goTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2019-01-02T03:04:05.000Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000 UTC`;
}
