// Scraping /v1/agent/metrics?format=prometheus as Prometheus would, parsed by a real text-format
// parser (parse-prometheus-text-format), and reading one series out of it.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export type Families = ReturnType<typeof parsePrometheusTextFormat>;

export interface Scrape {
  status: number;
  contentType: string | null;
  /** The document as parsed: families with their HELP, TYPE and samples. */
  families: Families;
  /**
   * The same document with its histogram TYPE lines left out, so that each histogram's `_count`,
   * `_sum` and `_bucket` series is read as plain families (one per run of lines). Why: the parser folds a histogram's
   * label sets into one (yunyu/parse-prometheus-text-format issue #13, unmerged PR #8), so per-label
   * counts are read here; every line is still parsed by the same parser.
   */
  plain: Families;
  text: string;
}

export async function scrape(url: string, token?: string): Promise<Scrape> {
  const res = await fetch(`${url}/v1/agent/metrics?format=prometheus`, { headers: token ? { 'X-Registry-Token': token } : {} });
  const text = await res.text();
  if (res.status !== 200) return { status: res.status, contentType: res.headers.get('content-type'), families: [], plain: [], text };
  const plainText = text
    .split('\n')
    .filter((line) => !/^# TYPE \S+ histogram$/.test(line))
    .join('\n');
  return { status: res.status, contentType: res.headers.get('content-type'), families: parsePrometheusTextFormat(text), plain: parsePrometheusTextFormat(plainText), text };
}

function matches(labels: Record<string, string> | undefined, want: Record<string, string>): boolean {
  return Object.entries(want).every(([k, v]) => labels?.[k] === v);
}

/** Every sample of family `name` (a family may come in several runs of lines: see `plain`). */
function samplesOf(f: Families, name: string) {
  return f.filter((x) => x.name === name).flatMap((x) => x.metrics);
}

/** A counter's or gauge's value for the first label set matching `labels` (undefined: no such series). */
export function valueOf(f: Families, name: string, labels: Record<string, string> = {}): number | undefined {
  const m = samplesOf(f, name).find((x) => matches(x.labels, labels));
  return m?.value === undefined ? undefined : Number(m.value);
}

/** A histogram's observation count for the first label set matching `labels` (0: none yet). */
export function countOf(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  return valueOf(s.plain, `${name}_count`, labels) ?? 0;
}

/** Every label set a histogram has observations for. */
export function labelSetsOf(s: Scrape, name: string): Record<string, string>[] {
  return samplesOf(s.plain, `${name}_count`).map((m) => m.labels ?? {});
}

export function typeOf(f: Families, name: string): string | undefined {
  return f.find((x) => x.name === name)?.type;
}
