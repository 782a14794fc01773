// /v1/query/* (spec "Prepared queries"; consul-behaviour §4).
import { randomUUID } from 'node:crypto';
import type { CheckServiceNodeOut, QueryDefinition, QuerySetResult } from '@registry/store';
import { badRequest, notFound } from '../../errors';
import { route, type Route, type RouteContext } from '../route';
import { readQuery } from '../../schemas/query-options';
import { GoBool, Int } from '../../schemas/query-fields';
import { compileBody } from '../../schemas/validator';
import { querySchema, type QueryBody } from '../../schemas/query';
import { definitionOf, validateDefinition } from '../../queries/definition';
import { sourceIp } from '../../queries/execute';
import { executionAnswer, noRemoteDatacenters, type RemoteDatacenterExecutor } from '../../queries/failover';
import { SimpleCache } from '../../cache/result-cache';
import { setCacheHeaders } from '../cached-read';
import type { ExecuteArgs, ExecuteCandidates } from '../../endpoints/query-reads';
import { readInto, waitSignal, type RouteDeps } from './deps';
import { resolveToken } from '../../rpc/acl-resolver';

export interface ExecuteResponse {
  Service: string;
  Nodes: CheckServiceNodeOut[];
  DNS: { TTL: string };
  Datacenter: string;
  Failovers: number;
}

/** `?limit`: strconv.Atoi, empty is no limit (0); a negative one counts as 0. */
const limit = Int((v: string) => `Bad limit: strconv.Atoi: parsing ${JSON.stringify(v)}: ${/^[+-]?\d+$/.test(v) ? 'value out of range' : 'invalid syntax'}`, 0);
/** `?connect` as Go's strconv.ParseBool reads it (empty: false). */
const connect = GoBool((v: string) => `Error parsing 'connect' value: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`, false);
const EXECUTE_QUERY = readQuery({ limit, connect });
// Explain parses (and refuses a bad) limit though it does not use it, as Consul does.
const EXPLAIN_QUERY = readQuery({ limit });

/** The QueryMeta fields Consul embeds in execute and explain bodies (Index is 0: not blocking). */
function queryMeta(ctx: RouteContext<any, any, any>) {
  return {
    Index: 0,
    LastContact: (ctx.meta.lastContactMs ?? 0) * 1e6,
    KnownLeader: ctx.meta.knownLeader ?? true,
    ConsistencyLevel: ctx.opts.consistency === 'default' ? 'leader' : ctx.opts.consistency,
  };
}

export function queryRoutes(deps: RouteDeps, remote: RemoteDatacenterExecutor = noRemoteDatacenters): Route<any>[] {
  const body = compileBody(querySchema);
  const cache = new SimpleCache<ExecuteResponse>();

  async function execute(ctx: RouteContext<any, any, any>, args: ExecuteArgs, limit: number): Promise<ExecuteResponse> {
    const reply = await deps.rpc.read('query.execute', args, ctx.opts, waitSignal(ctx));
    ctx.meta.knownLeader = reply.meta.knownLeader;
    ctx.meta.lastContactMs = reply.meta.lastContactMs;
    const { query, nodes } = reply.result.value;
    // The query's own token, when it has one, decides what the results may show.
    const authz = await resolveToken(deps.rpc.aclResolver, query.Token || ctx.opts.token);
    const { nodes: shown, datacenter, failovers } = await executionAnswer(query, nodes, ctx.opts.datacenter, authz, limit, remote, undefined, ctx.opts.token);
    // The spec lists DNS, Datacenter and Failovers on each node item as well as at the top (Consul's
    // documented sample shows them there); both are sent.
    const Nodes = shown.map((n) => ({ ...n, DNS: query.DNS, Datacenter: datacenter, Failovers: failovers }));
    return { Service: query.Service.Service, Nodes, DNS: query.DNS, Datacenter: datacenter, Failovers: failovers };
  }

  return [
    route({
      method: 'POST',
      path: '/v1/query',
      body,
      async handle({ body: b, opts }) {
        if (b.ID) throw badRequest('ID must be empty when creating a new prepared query');
        const query = definitionOf(b, randomUUID());
        validateDefinition(query);
        const r = (await deps.rpc.apply({ type: 'query.set', op: 'create', query }, { datacenter: opts.datacenter, token: opts.token })) as QuerySetResult;
        return { ID: 'ID' in r ? r.ID : query.ID };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/query',
      handle: (ctx) => readInto(deps, ctx, 'query.list', {}),
    }),
    route({
      method: 'PUT',
      path: '/v1/query/:id',
      body,
      bodyOptional: true,
      async handle({ body: b, params, opts }) {
        const query: QueryDefinition = definitionOf(b, params.id);
        validateDefinition(query);
        const r = (await deps.rpc.apply({ type: 'query.set', op: 'update', query }, { datacenter: opts.datacenter, token: opts.token })) as QuerySetResult;
        if ('notFound' in r) throw notFound(`Cannot modify non-existent prepared query: '${params.id}'`);
        return undefined;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/query/:id',
      async handle(ctx) {
        const value = await readInto(deps, ctx, 'query.get', { id: ctx.params.id });
        if (!value) throw notFound('Query not found');
        return value;
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/query/:id',
      async handle({ params, opts }) {
        const deleted = await deps.rpc.apply({ type: 'query.delete', id: params.id }, { datacenter: opts.datacenter, token: opts.token });
        if (!deleted) throw notFound(`Cannot modify non-existent prepared query: '${params.id}'`);
        return undefined;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/query/:id/execute',
      query: EXECUTE_QUERY,
      async handle(ctx) {
        const limit = Math.max(0, ctx.query.limit ?? 0);
        const args: ExecuteArgs = {
          idOrName: ctx.params.id,
          agentNode: deps.agent.nodeName,
          agentSegment: '',
          near: ctx.query.near ?? '',
          ip: sourceIp(ctx.headers['x-forwarded-for'], ctx.remoteAddress),
          connect: ctx.query.connect ?? false,
        };
        let result: ExecuteResponse;
        if (ctx.opts.cached) {
          const key = JSON.stringify([args, limit, ctx.opts.token ?? '', ctx.opts.datacenter]);
          const answer = await cache.get(key, ctx.opts.cacheControl, () => execute(ctx, args, limit));
          setCacheHeaders(ctx, answer);
          result = answer.value;
        } else {
          result = await execute(ctx, args, limit);
        }
        ctx.meta.index = 0;
        return { ...result, ...queryMeta(ctx) };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/query/:id/explain',
      query: EXPLAIN_QUERY,
      async handle(ctx) {
        const value = await readInto(deps, ctx, 'query.explain', { idOrName: ctx.params.id, agentSegment: '' });
        ctx.meta.index = 0;
        return { ...value, ...queryMeta(ctx) };
      },
    }),
  ];
}

