// /v1/kv/* (consul-behaviour Appendix A, §3.4). The key is the path after /v1/kv/, decoded segment
// by segment (clients send "/" inside a segment as %2F) and joined with "/".
import type { KvOp, KvWriteVerb } from '@registry/store';
import { badRequest, tooLarge } from '../../errors';
import { route, type Route, type RouteContext } from '../route';
import type { KvReadMode } from '../../endpoints/kv-reads';
import { readQuery, writeQuery } from '../../schemas/query-options';
import { Flag, Index, Text, Uint64Field } from '../../schemas/query-fields';
import { uint64Problem } from '../../schemas/query-schema';
import { readInto, type RouteDeps } from './deps';

/** Consul's maxKVSize. */
export const MAX_KV_VALUE_BYTES = 512 * 1024;

/** strconv's error for a `?cas=` / `?flags=` that is not a uint64, as Consul answers it. */
const notUint = (v: string) => `strconv.ParseUint: parsing ${JSON.stringify(v)}: ${uint64Problem(v)}`;

const GET_QUERY = readQuery({ recurse: Flag(), keys: Flag(), raw: Flag(), separator: Text() });
/** `?cas`, `?acquire`, `?release` choose the verb (at most one); `?flags` is a Go uint64. */
const PUT_QUERY = writeQuery({ cas: Index(notUint), acquire: Text(), release: Text(), flags: Uint64Field(notUint) });
const DELETE_QUERY = writeQuery({ recurse: Flag(), cas: Index(notUint) });

function keyOf(ctx: RouteContext<any, any, any>): string {
  return ctx.params.key ?? '';
}

export function kvRoutes(deps: RouteDeps): Route<any>[] {
  return [
    route({
      method: 'GET',
      path: '/v1/kv{/*key}',
      query: GET_QUERY,
      async handle(ctx) {
        const key = keyOf(ctx);
        const mode: KvReadMode = ctx.query.recurse ? 'recurse' : ctx.query.keys ? 'keys' : 'get';
        if (mode === 'get' && key === '') throw badRequest('Missing key name');
        const value = await readInto(deps, ctx, 'kv.get', { key, mode, separator: ctx.query.separator ?? '' });
        if (value === null) {
          ctx.meta.status = 404;
          return undefined;
        }
        if (mode === 'get' && ctx.query.raw) {
          const b64 = (value[0] as { Value: string | null }).Value;
          ctx.meta.raw = { contentType: 'application/octet-stream', data: b64 ? Buffer.from(b64, 'base64') : Buffer.alloc(0) };
        }
        return value;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/kv{/*key}',
      query: PUT_QUERY,
      async handle(ctx) {
        const key = keyOf(ctx);
        if (key === '') throw badRequest('Missing key name');
        const { query, opts, clientGone } = ctx;
        const given = [query.cas, query.acquire, query.release].filter((v) => v !== undefined);
        if (given.length > 1) throw badRequest(`Conflicting flags: ${ctx.rawQuery}`);
        const value = ctx.rawBody ?? Buffer.alloc(0);
        if (value.length > MAX_KV_VALUE_BYTES) throw tooLarge(`Value exceeds ${MAX_KV_VALUE_BYTES} byte limit`);
        let verb: KvWriteVerb = 'set';
        const op: KvOp = { Verb: verb, Key: key, Value: value.length > 0 ? new Uint8Array(value) : null, Flags: query.flags ?? 0 };
        if (query.cas !== undefined) {
          verb = 'cas';
          op.Index = query.cas;
        } else if (query.acquire !== undefined) {
          verb = 'lock';
          op.Session = query.acquire;
        } else if (query.release !== undefined) {
          verb = 'unlock';
          op.Session = query.release;
        }
        op.Verb = verb;
        return deps.rpc.apply({ type: 'kv.apply', op: op as KvOp & { Verb: KvWriteVerb } }, { datacenter: opts.datacenter, token: opts.token, clientGone });
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/kv{/*key}',
      query: DELETE_QUERY,
      async handle(ctx) {
        const key = keyOf(ctx);
        const { query, opts, clientGone } = ctx;
        const recurse = query.recurse;
        if (recurse && query.cas !== undefined) throw badRequest(`Conflicting flags: ${ctx.rawQuery}`);
        if (!recurse && key === '') throw badRequest('Missing key name');
        const op: KvOp & { Verb: KvWriteVerb } = recurse
          ? { Verb: 'delete-tree', Key: key }
          : query.cas !== undefined
            ? { Verb: 'delete-cas', Key: key, Index: query.cas }
            : { Verb: 'delete', Key: key };
        return deps.rpc.apply({ type: 'kv.apply', op }, { datacenter: opts.datacenter, token: opts.token, clientGone });
      },
    }),
  ];
}
