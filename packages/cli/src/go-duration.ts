// Go's time.ParseDuration for flags such as -timeout=30s (units ns, us, ms, s, m, h; sums allowed).
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseGoDurationMs(text: string): number | undefined {
  if (text === '0') return 0;
  const m = /^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(text);
  if (!m) return undefined;
  let total = 0;
  for (const part of text.replace(/^[+-]/, '').matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) total += Number(part[1]) * UNIT_MS[part[2]];
  return m[1] === '-' ? -total : total;
}

/** A commander argument parser for a Go duration flag. */
export const durationFlag = (name: string) => (v: string) => {
  const ms = parseGoDurationMs(v);
  if (ms === undefined) throw new Error(`invalid value "${v}" for flag -${name}: parse error`);
  return ms;
};
