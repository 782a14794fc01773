// Consul's output shapes: columnized tables (ryanuber/columnize: two spaces between columns) and
// aligned "Key: value" blocks.

export function printTable(rows: string[][]): void {
  if (rows.length === 0) return;
  const n = Math.max(...rows.map((r) => r.length));
  const widths = Array.from({ length: n }, (_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  for (const r of rows) out(r.map((c, i) => (c ?? '').padEnd(widths[i])).join('  ').trimEnd());
}

/** `Key:   value` lines with the values aligned one space after the longest key. */
export function printFields(fields: [string, string][], indent = ''): void {
  const w = Math.max(0, ...fields.map(([k]) => k.length + 1));
  for (const [k, v] of fields) out(`${indent}${`${k}:`.padEnd(w)}  ${v}`.trimEnd());
}

export function out(line: string): void {
  process.stdout.write(line + '\n');
}

export function err(line: string): void {
  process.stderr.write(line + '\n');
}

export function printJson(value: unknown, indent: string | number = 4): void {
  out(JSON.stringify(value, null, indent));
}
