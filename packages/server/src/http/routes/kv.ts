// /v1/kv/* (consul-behaviour Appendix A, §3.4). The key is the path after /v1/kv/, decoded segment
// by segment (clients send "/" inside a segment as %2F) and joined with "/".
import { parseUint64, type KvOp, type KvWriteVerb, type Uint64 } from '@registry/store';
import { badRequest, tooLarge } from '../../errors';
import { flag, single, type Query } from '../query-options';
import { route, type Route, type RouteContext } from '../route';
import type { KvReadMode } from '../../endpoints/kv-reads';
import { readInto, type RouteDeps } from './deps';

/** Consul's maxKVSize. */
export const MAX_KV_VALUE_BYTES = 512 * 1024;

function keyOf(ctx: RouteContext<any>): string {
  return ctx.params.key ?? '';
}

/** `?flags=`: a Go uint64, up to 2^64-1 (kept exact beyond 2^53). */
function flagsParam(query: Query): Uint64 {
  const v = single(query, 'flags');
  if (v === undefined) return 0;
  const parsed = parseUint64(v);
  if ('problem' in parsed) throw badRequest(`strconv.ParseUint: parsing ${JSON.stringify(v)}: ${parsed.problem}`);
  return parsed.value;
}

function uintParam(query: Query, name: string): number | undefined {
  const v = single(query, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw badRequest(`strconv.ParseUint: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Number(v);
}

function rawQuery(query: Query): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    for (const one of Array.isArray(v) ? v : [v ?? '']) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(one)}`);
  }
  return parts.join('&');
}

export function kvRoutes(deps: RouteDeps): Route<any>[] {
  return [
    route({
      method: 'GET',
      path: '/v1/kv{/*key}',
      async handle(ctx) {
        const key = keyOf(ctx);
        const mode: KvReadMode = flag(ctx.query, 'recurse') ? 'recurse' : flag(ctx.query, 'keys') ? 'keys' : 'get';
        if (mode === 'get' && key === '') throw badRequest('Missing key name');
        const value = await readInto<unknown[] | null>(deps, ctx, 'kv.get', { key, mode, separator: single(ctx.query, 'separator') ?? '' });
        if (value === null) {
          ctx.meta.status = 404;
          return undefined;
        }
        if (mode === 'get' && flag(ctx.query, 'raw')) {
          const b64 = (value[0] as { Value: string | null }).Value;
          ctx.meta.raw = { contentType: 'application/octet-stream', data: b64 ? Buffer.from(b64, 'base64') : Buffer.alloc(0) };
        }
        return value;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/kv{/*key}',
      async handle(ctx) {
        const key = keyOf(ctx);
        if (key === '') throw badRequest('Missing key name');
        const { query, opts, clientGone } = ctx;
        const given = ['cas', 'acquire', 'release'].filter((f) => flag(query, f));
        if (given.length > 1) throw badRequest(`Conflicting flags: ${rawQuery(query)}`);
        const value = ctx.rawBody ?? Buffer.alloc(0);
        if (value.length > MAX_KV_VALUE_BYTES) throw tooLarge(`Value exceeds ${MAX_KV_VALUE_BYTES} byte limit`);
        const flags = flagsParam(query);
        let verb: KvWriteVerb = 'set';
        const op: KvOp = { Verb: verb, Key: key, Value: value.length > 0 ? new Uint8Array(value) : null, Flags: flags };
        if (flag(query, 'cas')) {
          verb = 'cas';
          op.Index = uintParam(query, 'cas') ?? 0;
        } else if (flag(query, 'acquire')) {
          verb = 'lock';
          op.Session = single(query, 'acquire') ?? '';
        } else if (flag(query, 'release')) {
          verb = 'unlock';
          op.Session = single(query, 'release') ?? '';
        }
        op.Verb = verb;
        return deps.rpc.apply({ type: 'kv.apply', op: op as KvOp & { Verb: KvWriteVerb } }, { datacenter: opts.datacenter, token: opts.token, clientGone });
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/kv{/*key}',
      async handle(ctx) {
        const key = keyOf(ctx);
        const { query, opts, clientGone } = ctx;
        const recurse = flag(query, 'recurse');
        if (recurse && flag(query, 'cas')) throw badRequest(`Conflicting flags: ${rawQuery(query)}`);
        if (!recurse && key === '') throw badRequest('Missing key name');
        const op: KvOp & { Verb: KvWriteVerb } = recurse
          ? { Verb: 'delete-tree', Key: key }
          : flag(query, 'cas')
            ? { Verb: 'delete-cas', Key: key, Index: uintParam(query, 'cas') ?? 0 }
            : { Verb: 'delete', Key: key };
        return deps.rpc.apply({ type: 'kv.apply', op }, { datacenter: opts.datacenter, token: opts.token, clientGone });
      },
    }),
  ];
}
