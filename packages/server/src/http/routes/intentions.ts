// /v1/connect/intentions* (spec "Intentions"; consul-behaviour §6). Writes carry the ID and the time
// in the command, so every server stores the same row; check and match answer without index headers.
import { randomUUID } from 'node:crypto';
import type { IntentionInput, IntentionOut, MatchSide } from '@registry/store';
import { decideIntention } from '../../connect/intention-decision';
import { parseMatchEntry } from '../../connect/match-entry';
import { compileBody } from '../../schemas/validator';
import { intentionSchema } from '../../schemas/intention';
import { badRequest, notFound, methodNotAllowed } from '../../errors';
import { Type } from '@sinclair/typebox';
import { route, type Route } from '../route';
import { readQuery } from '../../schemas/query-options';
import { RequiredList, RequiredText, Text } from '../../schemas/query-fields';
import { readInto, waitSignal, type RouteDeps } from './deps';
import { isUUID } from '@registry/acl';

const BASE = '/v1/connect/intentions';

function checkId(id: string): void {
  if (id.length !== 36) throw badRequest('failed intention lookup: UUID must be 36 characters');
  if (!isUUID(id)) throw badRequest('failed intention lookup: UUID improperly formatted');
}

/** `/match` and `/check` answer GET only; the `/:id` routes must not take their other verbs. */
function refuseFixedPaths(id: string, method: string): void {
  if (id === 'match' || id === 'check') throw methodNotAllowed(method, 'OPTIONS,GET');
}

const notSet = (name: string) => `required query parameter '${name}' not set`;

const MATCH_QUERY = readQuery({
  // One `by`, source or destination; several, or an empty one, is "not set" (Consul's texts).
  by: RequiredList((by?: string[]) => (by?.length === 1 && by[0] ? "'by' parameter must be one of 'source' or 'destination'" : notSet('by')), {
    maxItems: 1,
    item: Type.Union([Type.Literal('source'), Type.Literal('destination')]),
  }),
  name: RequiredList(notSet('name')),
});
const CHECK_QUERY = readQuery({ source: RequiredText(notSet('source')), destination: RequiredText(notSet('destination')), 'source-type': Text() });

export function intentionRoutes(deps: RouteDeps): Route<any>[] {
  const body = compileBody(intentionSchema);
  // consul_compat: SourceType `consul` is accepted and answered as the caller sent it.
  const consulSourceType = deps.agent.consulCompat ? { consulSourceType: true } : {};

  return [
    route({
      method: 'GET',
      path: `${BASE}/match`,
      query: MATCH_QUERY,
      async handle(ctx) {
        const by: MatchSide = ctx.query.by[0];
        const names = ctx.query.name;
        const entries = names.map((n) => {
          const e = parseMatchEntry(n);
          return { namespace: e.namespace, name: e.name };
        });
        const reply = await deps.rpc.read('intention.match', { by, entries }, ctx.opts, waitSignal(ctx));
        // The spec: each value is an array (Consul sends null for a name without matches).
        const out: Record<string, IntentionOut[]> = Object.create(null); // keyed by the request's names
        names.forEach((n, i) => {
          out[n] = reply.result.value[i] ?? [];
        });
        return out;
      },
    }),
    route({
      method: 'GET',
      path: `${BASE}/check`,
      query: CHECK_QUERY,
      async handle(ctx) {
        const source = parseMatchEntry(ctx.query.source);
        const destination = parseMatchEntry(ctx.query.destination);
        const sourceType = ctx.query['source-type'];
        if (sourceType && sourceType !== 'registry' && !(deps.agent.consulCompat && sourceType === 'consul')) throw badRequest(`unsupported SourceType: ${JSON.stringify(sourceType)}`);
        const reply = await deps.rpc.read('intention.check', { destination }, ctx.opts, waitSignal(ctx));
        return { Allowed: decideIntention(reply.result.value, source, deps.connect.intentionDefaults()).allowed };
      },
    }),
    route({
      method: 'GET',
      path: BASE,
      handle: (ctx) => readInto(deps, ctx, 'intention.list', {}),
    }),
    route({
      method: 'POST',
      path: BASE,
      body,
      async handle({ body: input, opts, clientGone }) {
        if (input.ID) throw badRequest('ID must be empty when creating a new intention');
        const intention = { ...input, ID: randomUUID() };
        await deps.rpc.apply(
          { type: 'intention.upsert', op: 'create', intention, now: new Date().toISOString(), ...consulSourceType },
          { token: opts.token, datacenter: opts.datacenter, clientGone },
        );
        return { ID: intention.ID };
      },
    }),
    route({
      method: 'GET',
      path: `${BASE}/:id`,
      async handle(ctx) {
        checkId(ctx.params.id!);
        const value = await readInto(deps, ctx, 'intention.get', { id: ctx.params.id });
        if (!value) throw notFound('Intention not found');
        return value;
      },
    }),
    route({
      method: 'PUT',
      path: `${BASE}/:id`,
      body,
      async handle({ params, body: input, opts, clientGone }) {
        const id = params.id!;
        refuseFixedPaths(id, 'PUT');
        checkId(id);
        if (input.ID && input.ID !== id) throw badRequest(`ID in the body (${input.ID}) must match the ID in the URL (${id})`);
        await deps.rpc.apply(
          { type: 'intention.upsert', op: 'update', intention: { ...input, ID: id }, now: new Date().toISOString(), ...consulSourceType },
          { token: opts.token, datacenter: opts.datacenter, clientGone },
        );
        return { ID: id };
      },
    }),
    route({
      method: 'DELETE',
      path: `${BASE}/:id`,
      async handle({ params, opts, clientGone }) {
        const id = params.id!;
        refuseFixedPaths(id, 'DELETE');
        checkId(id);
        return deps.rpc.apply({ type: 'intention.delete', id }, { token: opts.token, datacenter: opts.datacenter, clientGone });
      },
    }),
  ];
}
