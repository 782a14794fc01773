// The query parameters every read shares, parsed once (consul-behaviour §1.6):
// dc → token → consistency → cache-control → wait/index.
import type { IncomingHttpHeaders } from 'node:http';
import { badRequest } from '../errors';
import type { Consistency, QueryOptions } from '../rpc/query-options';

export type { Consistency, QueryOptions };
import { parseDurationMs as parseDuration } from '@registry/store';

export type Query = Record<string, string | string[] | undefined>;
/** A presence flag (`?stale`, `?stale=`, `?stale=1`) — empty values count (Go clients send them). */
export function flag(query: Query, name: string): boolean {
  return query[name] !== undefined;
}

/**
 * The value of a one-valued parameter. Repeated (`?index=5&index=9`), the first counts, as in
 * Consul (Go's `url.Values.Get`); only the list parameters (`tag`, `node-meta`…) take them all.
 */
export function single(query: Query, name: string): string | undefined {
  const v = query[name];
  return Array.isArray(v) ? v[0] : v;
}

export function list(query: Query, name: string): string[] {
  const v = query[name];
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** `node-meta=k:v` (repeatable; split at the first ':'; no ':' → empty value). */
export function nodeMeta(query: Query): Record<string, string> | undefined {
  const items = list(query, 'node-meta');
  if (items.length === 0) return undefined;
  const meta: Record<string, string> = {};
  for (const item of items) {
    const i = item.indexOf(':');
    if (i < 0) meta[item] = '';
    else meta[item.slice(0, i)] = item.slice(i + 1);
  }
  return meta;
}

/**
 * Token precedence (the spec's Authentication section and Consul's parseToken):
 * `?token=` over `X-Registry-Token` over `Authorization: Bearer` over the agent's default token.
 * With `consulCompat` (http_config.consul_compat), `X-Consul-Token` counts as `X-Registry-Token`
 * (the registry name first when a request sends both).
 */
export function parseToken(query: Query, headers: IncomingHttpHeaders, agentDefault: string | undefined, consulCompat = false): string | undefined {
  const fromQuery = single(query, 'token');
  if (fromQuery) return fromQuery;
  const fromHeader = firstValue(headers['x-registry-token']) || (consulCompat ? firstValue(headers['x-consul-token']) : undefined);
  if (fromHeader) return fromHeader;
  const auth = headers.authorization;
  if (auth) {
    const parts = auth.split(' ');
    if (parts.length >= 2 && parts[0].toLowerCase() === 'bearer') {
      const value = parts.slice(1).join(' ').trim().split(/\s+/)[0];
      if (value) return value;
    }
  }
  return agentDefault || undefined;
}

function firstValue(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}

function parseCacheControl(header: string | undefined): QueryOptions['cacheControl'] {
  const cc: QueryOptions['cacheControl'] = { mustRevalidate: false };
  if (!header) return cc;
  for (const raw of header.toLowerCase().split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    if (part === 'must-revalidate') {
      cc.mustRevalidate = true;
      continue;
    }
    const [k, v] = part.split('=', 2);
    if (k === 'max-age' || k === 'stale-if-error') {
      if (v === undefined || !/^\d+$/.test(v)) throw badRequest('Invalid Cache-Control header.');
      const n = Number(v);
      if (k === 'max-age') {
        cc.maxAgeS = n;
        if (n === 0) cc.mustRevalidate = true;
      } else cc.staleIfErrorS = n;
    }
  }
  return cc;
}

export function parseQueryOptions(
  query: Query,
  headers: IncomingHttpHeaders,
  agent: { datacenter: string; defaultToken?: string; consulCompat?: boolean },
): QueryOptions {
  const datacenter = single(query, 'dc') || agent.datacenter;
  const token = parseToken(query, headers, agent.defaultToken, agent.consulCompat);
  const stale = flag(query, 'stale');
  const consistent = flag(query, 'consistent');
  const cached = flag(query, 'cached');
  if (stale && consistent) throw badRequest('Cannot specify ?stale with ?consistent, conflicting semantics.');
  if (cached && consistent) throw badRequest('Cannot specify ?cached with ?consistent, conflicting semantics.');
  let consistency: Consistency = stale ? 'stale' : consistent ? 'consistent' : 'default';
  const maxStale = single(query, 'max_stale');
  if (maxStale !== undefined) {
    const ms = parseDuration(maxStale);
    if (ms === undefined) throw badRequest(`Invalid max_stale value "${maxStale}"`);
    if (ms > 0 && consistency === 'default') consistency = 'stale';
  }
  const cc = headers['cache-control'];
  const cacheControl = parseCacheControl(Array.isArray(cc) ? cc.join(',') : cc);

  let waitMs: number | undefined;
  const wait = single(query, 'wait');
  if (wait !== undefined) {
    const ms = parseDuration(wait);
    if (ms === undefined || ms < 0) throw badRequest('Invalid wait time');
    waitMs = ms;
  }
  let minIndex = 0;
  const index = single(query, 'index');
  if (index !== undefined) {
    if (!/^\d+$/.test(index) || !Number.isSafeInteger(Number(index))) throw badRequest('Invalid index');
    minIndex = Number(index);
  }
  return { datacenter, token, consistency, cached, minIndex, waitMs, cacheControl };
}
