// Types for parse-prometheus-text-format (the package ships none): prom2json's shape.
declare module 'parse-prometheus-text-format' {
  interface ParsedMetric {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    quantiles?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  interface ParsedFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: ParsedMetric[];
  }
  function parsePrometheusTextFormat(text: string): ParsedFamily[];
  export = parsePrometheusTextFormat;
}
