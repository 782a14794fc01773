// The small part of HashiCorp's HIL that prepared-query templates use: `${name.full}`,
// `${name.prefix}`, `${name.suffix}`, `${agent.segment}`, `${match(N)}`, and `$${` for a literal
// `${`. A string is parsed once at save time (errors surface as 400 then) and evaluated per lookup.

export interface TemplateVars {
  'name.full': string;
  'name.prefix': string;
  'name.suffix': string;
  'agent.segment': string;
  /** Submatches of the template's Regexp against the full name ([] when none). */
  matches: readonly (string | undefined)[];
}

type Part = { text: string } | { variable: Exclude<keyof TemplateVars, 'matches'> } | { match: number };

export type Interpolation = readonly Part[];

const VARIABLES = new Set(['name.full', 'name.prefix', 'name.suffix', 'agent.segment']);
const MATCH = /^match\(\s*(-?\d+)\s*\)$/;

/** Parse `source`; throws an Error whose message says what is wrong. */
export function parseInterpolation(source: string): Interpolation {
  const parts: Part[] = [];
  let text = '';
  let i = 0;
  while (i < source.length) {
    if (source.startsWith('$${', i)) {
      text += '${';
      i += 3;
      continue;
    }
    if (!source.startsWith('${', i)) {
      text += source[i];
      i++;
      continue;
    }
    const end = source.indexOf('}', i + 2);
    if (end < 0) throw new Error(`unterminated interpolation at column ${i + 1}`);
    const expr = source.slice(i + 2, end).trim();
    if (text) parts.push({ text });
    text = '';
    if (VARIABLES.has(expr)) parts.push({ variable: expr as Exclude<keyof TemplateVars, 'matches'> });
    else {
      const m = MATCH.exec(expr);
      if (m) parts.push({ match: Number(m[1]) });
      else if (/^[A-Za-z_][\w.]*$/.test(expr)) throw new Error(`unknown variable accessed: ${expr}`);
      else if (/^[A-Za-z_]\w*\(/.test(expr)) throw new Error(`unknown function called: ${expr.slice(0, expr.indexOf('('))}`);
      else throw new Error(`invalid expression ${JSON.stringify(expr)}`);
    }
    i = end + 1;
  }
  if (text) parts.push({ text });
  return parts;
}

export function evaluate(parts: Interpolation, vars: TemplateVars): string {
  let out = '';
  for (const p of parts) {
    if ('text' in p) out += p.text;
    else if ('variable' in p) out += vars[p.variable];
    else out += (p.match >= 0 ? vars.matches[p.match] : undefined) ?? '';
  }
  return out;
}
