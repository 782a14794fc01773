// /v1/query/* (spec "Prepared queries"; consul-behaviour §4).
import { randomUUID } from 'node:crypto';
import type { CheckServiceNodeOut, QueryDefinition, QuerySetResult } from '@registry/store';
import { badRequest, notFound } from '../../errors';
import { single } from '../query-options';
import { route, type Route, type RouteContext } from '../route';
import { compileBody } from '../../schemas/validator';
import { querySchema, type QueryBody } from '../../schemas/query';
import { definitionOf, validateDefinition } from '../../queries/definition';
import { sourceIp } from '../../queries/execute';
import { executionAnswer, noRemoteDatacenters, type RemoteDatacenterExecutor } from '../../queries/failover';
import { SimpleCache } from '../../queries/result-cache';
import type { ExecuteArgs, ExecuteCandidates } from '../../endpoints/query-reads';
import { readInto, type RouteDeps } from './deps';

export interface ExecuteResponse {
  Service: string;
  Nodes: CheckServiceNodeOut[];
  DNS: { TTL: string };
  Datacenter: string;
  Failovers: number;
}

/** `?limit`: a non-negative integer (0 = no limit). */
function limitOf(ctx: RouteContext<any>): number {
  const v = single(ctx.query, 'limit');
  if (v === undefined || v === '') return 0;
  if (!/^[+-]?\d+$/.test(v)) throw badRequest(`Bad limit: strconv.Atoi: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Math.max(0, Number(v));
}

/** `?connect` as Go's strconv.ParseBool reads it. */
function connectOf(ctx: RouteContext<any>): boolean {
  const v = single(ctx.query, 'connect');
  if (v === undefined) return false;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False', ''].includes(v)) return false;
  throw badRequest(`Error parsing 'connect' value: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

/** The QueryMeta fields Consul embeds in execute and explain bodies (Index is 0: not blocking). */
function queryMeta(ctx: RouteContext<any>) {
  return {
    Index: 0,
    LastContact: (ctx.meta.lastContactMs ?? 0) * 1e6,
    KnownLeader: ctx.meta.knownLeader ?? true,
    ConsistencyLevel: ctx.opts.consistency === 'default' ? 'leader' : ctx.opts.consistency,
  };
}

export function queryRoutes(deps: RouteDeps, remote: RemoteDatacenterExecutor = noRemoteDatacenters): Route<any>[] {
  const body = compileBody<QueryBody>(querySchema);
  const cache = new SimpleCache<ExecuteResponse>();

  async function execute(ctx: RouteContext<any>, args: ExecuteArgs, limit: number): Promise<ExecuteResponse> {
    const reply = await deps.rpc.read<ExecuteCandidates>('query.execute', args, { ...ctx.opts, minIndex: 0 }, ctx.signal);
    ctx.meta.knownLeader = reply.meta.knownLeader;
    ctx.meta.lastContactMs = reply.meta.lastContactMs;
    const { query, nodes } = reply.result.value;
    // The query's own token, when it has one, decides what the results may show.
    const authz = deps.rpc.aclResolver.resolve(query.Token || ctx.opts.token);
    const { nodes: shown, datacenter, failovers } = await executionAnswer(query, nodes, ctx.opts.datacenter, authz, limit, remote, undefined, ctx.opts.token);
    // The spec lists DNS, Datacenter and Failovers on each node item as well as at the top (Consul's
    // documented sample shows them there); both are sent.
    const Nodes = shown.map((n) => ({ ...n, DNS: query.DNS, Datacenter: datacenter, Failovers: failovers }));
    return { Service: query.Service.Service, Nodes, DNS: query.DNS, Datacenter: datacenter, Failovers: failovers };
  }

  return [
    route<QueryBody>({
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
    route<QueryBody>({
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
        const value = await readInto<unknown[] | null>(deps, ctx, 'query.get', { id: ctx.params.id });
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
      async handle(ctx) {
        const limit = limitOf(ctx);
        const args: ExecuteArgs = {
          idOrName: ctx.params.id,
          agentNode: deps.agent.nodeName,
          agentSegment: '',
          near: single(ctx.query, 'near') ?? '',
          ip: sourceIp(ctx.headers['x-forwarded-for'], ctx.remoteAddress),
          connect: connectOf(ctx),
        };
        let result: ExecuteResponse;
        if (ctx.opts.cached) {
          const key = JSON.stringify([args, limit, ctx.opts.token ?? '', ctx.opts.datacenter]);
          const answer = await cache.get(key, ctx.opts.cacheControl, () => execute(ctx, args, limit));
          ctx.meta.headers['X-Cache'] = answer.hit ? 'HIT' : 'MISS';
          if (answer.hit) ctx.meta.headers.Age = String(answer.ageS);
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
      async handle(ctx) {
        limitOf(ctx); // parsed (and refused when bad) though unused, as Consul does
        const value = await readInto<{ Query: QueryDefinition }>(deps, ctx, 'query.explain', { idOrName: ctx.params.id, agentSegment: '' });
        ctx.meta.index = 0;
        return { ...value, ...queryMeta(ctx) };
      },
    }),
  ];
}

