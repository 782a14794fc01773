// Check definitions carry durations that Consul prints with Go's time.Duration formatting
// ("10s", "1m30s", "1h0m0s", "500ms"); accepting Go's syntax and re-printing it keeps output
// identical to Consul's whatever spelling the client used ("10000ms" reads back as "10s").

const UNIT_NS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 6e10, h: 3.6e12 };
const TERM = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;

/** Nanoseconds of a Go duration string ("1h2m3.5s", "-10ms", "0"), or undefined if malformed. */
export function parseGoDuration(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest.startsWith('-')) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  while (rest.length > 0) {
    const m = TERM.exec(rest);
    if (!m) return undefined;
    const whole = m[1] ?? '';
    const frac = m[2] ?? '';
    if (whole === '' && frac === '') return undefined;
    total += (Number(whole || '0') + (frac ? Number(`0.${frac}`) : 0)) * (UNIT_NS[m[3] ?? ''] ?? NaN);
    rest = rest.slice(m[0].length);
  }
  return Number.isFinite(total) ? sign * Math.round(total) : undefined;
}

function withFraction(value: number, unit: number): string {
  const whole = Math.floor(value / unit);
  const frac = value % unit;
  if (frac === 0) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(frac).padStart(digits, '0').replace(/0+$/, '')}`;
}

/** Go's Duration.String() of a whole number of nanoseconds. */
export function formatGoDuration(nanoseconds: number): string {
  const ns = Math.round(nanoseconds);
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  let u = Math.abs(ns);
  if (u < 1e3) return `${sign}${u}ns`;
  if (u < 1e6) return `${sign}${withFraction(u, 1e3)}µs`;
  if (u < 1e9) return `${sign}${withFraction(u, 1e6)}ms`;
  const hours = Math.floor(u / 3.6e12);
  u -= hours * 3.6e12;
  const minutes = Math.floor(u / 6e10);
  u -= minutes * 6e10;
  const seconds = `${withFraction(u, 1e9)}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}`;
  return `${sign}${seconds}`;
}

/** Milliseconds of a Go duration string (surrounding spaces ignored), or undefined if malformed. */
export function parseDurationMs(text: string): number | undefined {
  const ns = parseGoDuration(text.trim());
  return ns === undefined ? undefined : ns / 1e6;
}

/** Go's Duration.String() of a number of milliseconds (15000 → "15s", 90000 → "1m30s"). */
export function formatDurationMs(ms: number): string {
  return formatGoDuration(ms * 1e6);
}
