// A request body becomes a complete prepared-query definition (Go zero values for what is missing),
// checked as Consul's parseQuery and template compiler do, with their texts (as 400s).
import { parseGoDuration, type QueryDefinition } from '@registry/store';
import { badRequest } from '../errors';
import type { QueryBody } from '../schemas/query';
import { compileTemplate, TemplateError } from './template';

export const REDACTED = '<hidden>';
const META_KEY = /^[a-zA-Z0-9_-]+$/;

export function definitionOf(body: QueryBody, id: string): QueryDefinition {
  const s = body.Service ?? {};
  const copyMap = (m: Record<string, string> | null | undefined) => (m ? { ...m } : null);
  return {
    ID: id,
    Name: body.Name ?? '',
    Session: body.Session ?? '',
    Token: body.Token ?? '',
    Template: {
      Type: body.Template?.Type ?? '',
      Regexp: body.Template?.Regexp ?? '',
      RemoveEmptyTags: body.Template?.RemoveEmptyTags ?? false,
    },
    Service: {
      Service: s.Service ?? '',
      Failover: { NearestN: s.Failover?.NearestN ?? 0, Datacenters: s.Failover?.Datacenters ? [...s.Failover.Datacenters] : null },
      OnlyPassing: s.OnlyPassing ?? false,
      IgnoreCheckIDs: s.IgnoreCheckIDs ? [...s.IgnoreCheckIDs] : null,
      Near: s.Near ?? '',
      Tags: s.Tags ? [...s.Tags] : null,
      NodeMeta: copyMap(s.NodeMeta),
      ServiceMeta: copyMap(s.ServiceMeta),
      Meta: copyMap(s.Meta),
      Connect: s.Connect ?? false,
    },
    DNS: { TTL: body.DNS?.TTL ?? '' },
  };
}

function metaProblem(meta: Record<string, string> | null): string | undefined {
  const entries = Object.entries(meta ?? {});
  if (entries.length > 64) return `Node metadata cannot contain more than 64 key/value pairs`;
  for (const [k, v] of entries) {
    if (k === '') return 'Key cannot be blank';
    if (!META_KEY.test(k)) return `Key contains invalid characters`;
    if (k.length > 128) return `Key is too long (limit: 128 characters)`;
    if (v.length > 512) return `Value is too long (limit: 512 characters)`;
  }
  return undefined;
}

/** Throws a 400 for a definition Consul would refuse before touching the state. */
export function validateDefinition(q: QueryDefinition): void {
  const bad = (reason: string) => badRequest(`Invalid prepared query: ${reason}`);
  if (q.Name === '' && q.Template.Type === '' && q.Session === '') throw bad('Must be bound to a session');
  if (q.Token === REDACTED) throw bad(`Bad Token '${q.Token}', it looks like a query definition with a redacted token was submitted`);
  if (q.Service.Service === '') throw bad('Must provide a Service name to query');
  if (q.Service.Failover.NearestN < 0) throw bad(`Bad NearestN '${q.Service.Failover.NearestN}', must be >= 0`);
  const meta = metaProblem(q.Service.NodeMeta);
  if (meta) throw bad(meta);
  if (q.DNS.TTL !== '') {
    const ns = parseGoDuration(q.DNS.TTL);
    if (ns === undefined) throw bad(`Bad DNS TTL '${q.DNS.TTL}': time: invalid duration ${JSON.stringify(q.DNS.TTL)}`);
    if (ns < 0) throw bad(`Bad DNS TTL '${ns}', must be >=0`);
  }
  try {
    // Rendering with its own name surfaces evaluation problems now rather than at the first lookup.
    compileTemplate(q).render(q.Name);
  } catch (err) {
    if (err instanceof TemplateError) throw badRequest(err.message);
    throw err;
  }
}
