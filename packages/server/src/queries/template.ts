// Prepared-query templates (consul-behaviour §4.4): compiled once when saved — the Type, the Regexp
// (RE2 syntax, run by the RE2 engine of regexp/user-regexp.ts: linear time whatever the pattern,
// backreferences and lookaround refused) and every string inside Service — then rendered for each
// looked-up name.
import type { PreparedServiceQuery, QueryDefinition } from '@registry/store';
import { compileUserRegexp, UserRegexpError, type UserRegexp } from '../regexp/user-regexp';
import { evaluate, parseInterpolation, type Interpolation, type TemplateVars } from './interpolation';

export const NAME_PREFIX_MATCH = 'name_prefix_match';

export class TemplateError extends Error {}

/** The template's RE2 pattern; throws TemplateError (Consul's text) when it is not valid RE2. */
export function compileRegexp(pattern: string): UserRegexp {
  try {
    return compileUserRegexp(pattern);
  } catch (err) {
    if (err instanceof UserRegexpError) throw new TemplateError(`failed compiling template: Bad Regexp: ${err.message}`);
    throw err;
  }
}

/** Every string inside Service, with its path (`.Tags[1]`, `.NodeMeta[rack]`), for compiling and rendering. */
interface StringSlot {
  path: string;
  get(s: PreparedServiceQuery): string;
  set(s: PreparedServiceQuery, v: string): void;
}

function slots(s: PreparedServiceQuery): StringSlot[] {
  const out: StringSlot[] = [
    { path: '.Service', get: (q) => q.Service, set: (q, v) => (q.Service = v) },
    { path: '.Near', get: (q) => q.Near, set: (q, v) => (q.Near = v) },
  ];
  const lists = [
    ['Tags', (q: PreparedServiceQuery) => q.Tags],
    ['IgnoreCheckIDs', (q: PreparedServiceQuery) => q.IgnoreCheckIDs],
    ['Failover.Datacenters', (q: PreparedServiceQuery) => q.Failover.Datacenters],
  ] as const;
  for (const [name, list] of lists) {
    (list(s) ?? []).forEach((_, i) =>
      out.push({ path: `.${name}[${i}]`, get: (q) => (list(q) as string[])[i], set: (q, v) => ((list(q) as string[])[i] = v) }),
    );
  }
  const maps = [
    ['NodeMeta', (q: PreparedServiceQuery) => q.NodeMeta],
    ['ServiceMeta', (q: PreparedServiceQuery) => q.ServiceMeta],
    ['Meta', (q: PreparedServiceQuery) => q.Meta],
  ] as const;
  for (const [name, map] of maps) {
    for (const k of Object.keys(map(s) ?? {})) {
      out.push({ path: `.${name}[${k}]`, get: (q) => (map(q) as Record<string, string>)[k], set: (q, v) => ((map(q) as Record<string, string>)[k] = v) });
    }
  }
  return out;
}

export interface CompiledTemplate {
  /** The query with Service interpolated for a lookup of `name` (its ID and Name stay the template's). */
  render(name: string, agentSegment?: string): QueryDefinition;
}

/** Compile a template query; throws TemplateError with Consul's texts. Static queries render as themselves. */
export function compileTemplate(q: QueryDefinition): CompiledTemplate {
  if (q.Template.Type === '') return { render: () => structuredClone(q) };
  if (q.Template.Type !== NAME_PREFIX_MATCH) throw new TemplateError(`failed compiling template: Bad Template.Type '${q.Template.Type}'`);
  const re = q.Template.Regexp ? compileRegexp(q.Template.Regexp) : undefined;
  const compiled: { slot: StringSlot; parts: Interpolation }[] = [];
  for (const slot of slots(q.Service)) {
    const source = slot.get(q.Service);
    try {
      compiled.push({ slot, parts: parseInterpolation(source) });
    } catch (err) {
      throw new TemplateError(`failed compiling template: Bad format '${source}' in Service${slot.path}: ${(err as Error).message}`);
    }
  }
  return {
    render(name: string, agentSegment = ''): QueryDefinition {
      const out = structuredClone(q);
      const vars: TemplateVars = {
        'name.full': name,
        'name.prefix': q.Name,
        'name.suffix': name.startsWith(q.Name) ? name.slice(q.Name.length) : name,
        'agent.segment': agentSegment,
        matches: re ? re.exec(name) ?? [] : [],
      };
      for (const { slot, parts } of compiled) slot.set(out.Service, evaluate(parts, vars));
      if (q.Template.RemoveEmptyTags && out.Service.Tags) out.Service.Tags = out.Service.Tags.filter((t) => t !== '');
      return out;
    },
  };
}
