// The query options every route shares (consul-behaviour §1.6), built once per request from the
// typed query (the shared fragment in schemas/query-options.ts has already parsed and checked
// index, wait and max_stale): dc → token → consistency → cache-control → wait/index.
import type { IncomingHttpHeaders } from 'node:http';
import type { Static } from '@sinclair/typebox';
import { badRequest } from '../errors';
import type { Consistency, QueryOptions } from '../rpc/query-options';
import type { ReadOptionsQuery } from '../schemas/query-options';

export type { Consistency, QueryOptions };

/** A query as it arrives (node:querystring): a repeated name is an array. */
export type Query = Record<string, string | string[] | undefined>;

/** The shared options of a typed query; a write's query has only dc and token of them. */
export type OptionsQuery = Partial<Static<typeof ReadOptionsQuery>>;

/** `node-meta=k:v` (repeatable; split at the first ':'; no ':' → empty value). */
export function nodeMeta(items: readonly string[] | undefined): Record<string, string> | undefined {
  if (!items || items.length === 0) return undefined;
  const meta: Record<string, string> = Object.create(null); // keyed by the request
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
export function parseToken(fromQuery: string | undefined, headers: IncomingHttpHeaders, agentDefault: string | undefined, consulCompat = false): string | undefined {
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

/** Consul's parseConsistency: `?stale`, `?consistent` (not both), and `max_stale` > 0 as stale. */
export function consistencyOf(q: OptionsQuery): Consistency {
  if (q.stale && q.consistent) throw badRequest('Cannot specify ?stale with ?consistent, conflicting semantics.');
  if (q.stale) return 'stale';
  if (q.consistent) return 'consistent';
  return q.max_stale !== undefined && q.max_stale > 0 ? 'stale' : 'default';
}

/** The one default query-options builder: the typed shared fragment and the headers → QueryOptions. */
export function queryOptions(
  q: OptionsQuery,
  headers: IncomingHttpHeaders,
  agent: { datacenter: string; defaultToken?: string; consulCompat?: boolean },
): QueryOptions {
  const datacenter = q.dc || agent.datacenter;
  const token = parseToken(q.token, headers, agent.defaultToken, agent.consulCompat);
  const cached = q.cached === true;
  const consistency = consistencyOf(q);
  if (cached && q.consistent) throw badRequest('Cannot specify ?cached with ?consistent, conflicting semantics.');
  const cc = headers['cache-control'];
  const cacheControl = parseCacheControl(Array.isArray(cc) ? cc.join(',') : cc);
  return { datacenter, token, consistency, cached, minIndex: q.index ?? 0, waitMs: q.wait, cacheControl };
}
