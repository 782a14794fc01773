// Go-style duration strings ("10s", "1m30s", "250ms", "1.5h"), the form Consul's clients send.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;

/** Milliseconds, or undefined when `text` is not a Go duration. A bare number is not a duration. */
export function parseDuration(text: string): number | undefined {
  let s = text.trim();
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < s.length) {
    const start = PART.lastIndex;
    const m = PART.exec(s);
    if (!m || m.index !== start) return undefined;
    total += parseFloat(m[1]) * UNIT_MS[m[2]];
  }
  return sign * total;
}

/** Go's Duration.String() for whole milliseconds, e.g. 15000 → "15s", 90000 → "1m30s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = Math.round(ms);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = rest / 1000;
  if (h === 0 && m === 0 && s < 1) return `${rest}ms`;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}
