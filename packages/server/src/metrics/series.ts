// One series, two forms: a prom-client metric (cumulative, for Prometheus) and, per label set, an
// interval aggregate (for the Consul-shaped JSON form). Label sets are bound once — `bind()` at
// wiring time or on first use — into cells of plain numbers: a hook call on the hot path bumps
// numbers and allocates nothing; prom-client reads the cells when it is scraped.
import { Counter, Gauge, type Registry } from './prom-client-parts';
import { IntervalAggregate, type IntervalClock } from './interval-aggregate';

export type Labels = Record<string, string>;

/** Where a series' JSON side is listed. */
export interface JsonCatalog {
  samples: JsonCell[];
  counters: JsonCell[];
  gauges: JsonGauge[];
}

export interface JsonCell {
  name: string;
  labels: Labels;
  agg: IntervalAggregate;
}

export interface GaugeValue {
  labels: Labels;
  value: number;
}

export interface JsonGauge {
  name: string;
  read(): GaugeValue[];
}

export interface SeriesContext {
  registry: Registry;
  clock: IntervalClock;
  json: JsonCatalog;
}

interface PromSpec {
  /** Prometheus name (`registry_…`). */
  name: string;
  help: string;
  labelNames?: readonly string[];
}

/**
 * Latency buckets in seconds: sub-millisecond in-memory work up to 10-minute blocking queries.
 */
export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

/**
 * A bound timer: Prometheus gets seconds, the JSON form milliseconds (go-metrics' unit). The hot
 * path only bumps numbers in this cell; prom-client reads the cells when scraped (a prom-client
 * child's `observe` hashes its labels into a new string on every call, which a request should not pay).
 */
export class Timer {
  /** Observations per bucket of LATENCY_BUCKETS (not cumulative), then the count above the last. */
  readonly buckets = new Float64Array(LATENCY_BUCKETS.length + 1);
  count = 0;
  sumSeconds = 0;

  constructor(
    readonly labels: Labels,
    private readonly agg: IntervalAggregate,
  ) {}

  observeMs(ms: number): void {
    const seconds = ms / 1000;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]) i++;
    this.buckets[i]++;
    this.count++;
    this.sumSeconds += seconds;
    this.agg.add(ms);
  }
}

/** What a prom-client Registry asks of a metric it exposes (its `get()` shape for a histogram). */
interface HistogramValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

export class TimerSeries {
  private readonly bound = new Map<string, Timer>();

  constructor(
    private readonly ctx: SeriesContext,
    private readonly jsonName: string,
    private readonly prom: PromSpec,
  ) {
    const cells = this.bound;
    // Registered as a plain metric: the Registry formats whatever `get()` returns (the shape
    // prom-client's own Histogram returns), so the exposition is still prom-client's.
    const metric = {
      name: prom.name,
      help: prom.help,
      type: 'histogram',
      aggregator: 'sum',
      reset: () => undefined,
      get: async () => {
        const values: HistogramValue[] = [];
        for (const t of cells.values()) {
          let cumulative = 0;
          for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
            cumulative += t.buckets[i];
            values.push({ labels: { ...t.labels, le: LATENCY_BUCKETS[i] }, value: cumulative, metricName: `${prom.name}_bucket` });
          }
          values.push({ labels: { ...t.labels, le: '+Inf' }, value: t.count, metricName: `${prom.name}_bucket` });
          values.push({ labels: t.labels, value: t.sumSeconds, metricName: `${prom.name}_sum` });
          values.push({ labels: t.labels, value: t.count, metricName: `${prom.name}_count` });
        }
        return { name: prom.name, help: prom.help, type: 'histogram', values, aggregator: 'sum' };
      },
    };
    ctx.registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  bind(labels: Labels = {}): Timer {
    const key = keyOf(this.prom.labelNames, labels);
    let t = this.bound.get(key);
    if (!t) {
      const agg = new IntervalAggregate(this.ctx.clock);
      t = new Timer({ ...labels }, agg);
      this.bound.set(key, t);
      this.ctx.json.samples.push({ name: this.jsonName, labels, agg });
    }
    return t;
  }
}

/** A bound counter: a number bumped here, handed to prom-client when scraped. */
export class CounterCell {
  total = 0;

  constructor(
    readonly labels: Labels,
    private readonly agg: IntervalAggregate,
  ) {}

  inc(n = 1): void {
    this.total += n;
    this.agg.add(n);
  }
}

export class CounterSeries {
  private readonly bound = new Map<string, CounterCell>();

  constructor(
    private readonly ctx: SeriesContext,
    private readonly jsonName: string,
    private readonly prom: PromSpec,
  ) {
    const cells = this.bound;
    const counter: Counter<string> = new Counter({
      name: prom.name,
      help: prom.help,
      labelNames: prom.labelNames ?? [],
      registers: [ctx.registry],
      collect() {
        counter.reset();
        for (const c of cells.values()) counter.inc(c.labels, c.total);
      },
    });
  }

  bind(labels: Labels = {}): CounterCell {
    const key = keyOf(this.prom.labelNames, labels);
    let c = this.bound.get(key);
    if (!c) {
      const agg = new IntervalAggregate(this.ctx.clock);
      // Exposed at 0 before its first increment, so a scrape shows the series exists.
      c = new CounterCell({ ...labels }, agg);
      this.bound.set(key, c);
      this.ctx.json.counters.push({ name: this.jsonName, labels, agg });
    }
    return c;
  }
}

/**
 * A gauge read when scraped (table sizes, Raft indexes, open blocking queries…): nothing is
 * updated on the hot path at all. `read` returns one value per label set.
 */
export function scrapeGauge(ctx: SeriesContext, jsonName: string, prom: PromSpec & { scale?: number }, read: () => GaugeValue[]): void {
  const scale = prom.scale ?? 1;
  const gauge: Gauge<string> = new Gauge({
    name: prom.name,
    help: prom.help,
    labelNames: prom.labelNames ?? [],
    registers: [ctx.registry],
    collect() {
      gauge.reset();
      for (const v of read()) gauge.set(v.labels, v.value * scale);
    },
  });
  ctx.json.gauges.push({ name: jsonName, read });
}

/** A single unlabelled value for scrapeGauge. */
export function one(value: number): GaugeValue[] {
  return [{ labels: {}, value }];
}

function keyOf(names: readonly string[] | undefined, labels: Labels): string {
  return (names ?? []).map((n) => labels[n] ?? '').join('\u0001');
}
