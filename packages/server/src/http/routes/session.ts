// /v1/session/* (spec "Sessions"; consul-behaviour §3).
import { randomUUID } from 'node:crypto';
import { formatGoDuration, parseGoDuration, type SessionData, type SessionRecord } from '@registry/store';
import { Type } from '@sinclair/typebox';
import { badRequest, notFound } from '../../errors';
import { route, type Route } from '../route';
import { RequiredText, RequiredUuid } from '../../schemas/query-fields';
import { compileBody } from '../../schemas/validator';
import { sessionCreateSchema, type SessionCreateBody } from '../../schemas/session';
import { SESSION_TTL_MAX_MS } from '../../sessions/session-ttl';
import { readInto, waitSignal, type RouteDeps } from './deps';

const DEFAULT_LOCK_DELAY_NS = 15e9;

/** LockDelay: a number below 1000 means seconds, else nanoseconds; a string is a Go duration. */
export function lockDelayNs(value: number | string | null | undefined): number {
  if (value === undefined || value === null) return DEFAULT_LOCK_DELAY_NS;
  let ns: number | undefined;
  if (typeof value === 'number') ns = value;
  else {
    ns = parseGoDuration(value);
    if (ns === undefined) throw badRequest(`Request decode failed: time: invalid duration ${JSON.stringify(value)}`);
  }
  if (!Number.isFinite(ns) || ns < 0) throw badRequest(`Request decode failed: LockDelay must not be negative`);
  // Consul: anything under 1000 was meant as seconds (15 → 15s, "10ns" → 10s).
  return Math.round(ns < 1000 ? ns * 1e9 : ns);
}

/** TTL: empty or 0 for none, else between the minimum and 24 h. */
export function checkTtl(ttl: string, minMs: number): void {
  if (ttl === '') return;
  const ns = parseGoDuration(ttl);
  if (ns === undefined) throw badRequest(`Session TTL '${ttl}' invalid: time: invalid duration ${JSON.stringify(ttl)}`);
  if (ns === 0) return;
  if (ns < minMs * 1e6 || ns > SESSION_TTL_MAX_MS * 1e6) {
    throw badRequest(`Invalid Session TTL '${ns}', must be between [${formatGoDuration(minMs * 1e6)}=${formatGoDuration(SESSION_TTL_MAX_MS * 1e6)}]`);
  }
}

/** The session a destroy or renew names: a UUID. */
const SESSION_ID_PARAMS = Type.Object({
  id: RequiredUuid((raw?: string) => (raw ? `Invalid session ID '${raw}': UUID must be 36 characters of the form 8-4-4-4-12 hex digits` : 'Missing session')),
});
const INFO_PARAMS = Type.Object({ id: RequiredText('Missing session') });
const NODE_PARAMS = Type.Object({ node: RequiredText('Missing node name') });

export function sessionRoutes(deps: RouteDeps): Route<any>[] {
  const createBody = compileBody(sessionCreateSchema);
  const sessions = () => {
    if (!deps.sessions) throw new Error('sessions are not wired into this agent');
    return deps.sessions;
  };
  return [
    route({
      method: 'PUT',
      path: '/v1/session/create',
      body: createBody,
      bodyOptional: true,
      async handle({ body, opts, clientGone }) {
        const node = body.Node === undefined || body.Node === null ? deps.agent.nodeName : body.Node;
        if (node === '') throw badRequest('Must provide Node');
        const behavior = body.Behavior || 'release';
        if (behavior !== 'release' && behavior !== 'delete') throw badRequest(`Invalid Behavior setting '${behavior}'`);
        const ttl = body.TTL ?? '';
        checkTtl(ttl, sessions().ttlMinMs);
        const session: SessionData = {
          ID: randomUUID(),
          Name: body.Name ?? '',
          Node: node,
          Checks: 'Checks' in body ? (body.Checks ?? null) : ['serfHealth'],
          LockDelay: lockDelayNs(body.LockDelay),
          Behavior: behavior,
          TTL: ttl,
        };
        const id = await deps.rpc.apply({ type: 'session.create', session }, { datacenter: opts.datacenter, token: opts.token, clientGone });
        return { ID: id };
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/session/destroy{/:id}',
      params: SESSION_ID_PARAMS,
      async handle({ params, opts, clientGone }) {
        const id = params.id;
        return deps.rpc.apply({ type: 'session.destroy', id }, { datacenter: opts.datacenter, token: opts.token, clientGone });
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/session/renew{/:id}',
      params: SESSION_ID_PARAMS,
      async handle(ctx) {
        const id = ctx.params.id;
        // Checked with the leader's state (the endpoint's policy), whose timer is the one to restart.
        const reply = await deps.rpc.read('session.renew', { id }, ctx.opts, waitSignal(ctx));
        if (!reply.result.value) throw notFound(`Session id '${id}' not found`);
        await sessions().renew(id, ctx.opts.token);
        return reply.result.value;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/session/info{/:id}',
      params: INFO_PARAMS,
      handle(ctx) {
        return readInto(deps, ctx, 'session.info', { id: ctx.params.id });
      },
    }),
    route({
      method: 'GET',
      path: '/v1/session/node{/:node}',
      params: NODE_PARAMS,
      handle(ctx) {
        return readInto(deps, ctx, 'session.node', { node: ctx.params.node });
      },
    }),
    route({
      method: 'GET',
      path: '/v1/session/list',
      handle: (ctx) => readInto(deps, ctx, 'session.list', {}),
    }),
  ];
}
