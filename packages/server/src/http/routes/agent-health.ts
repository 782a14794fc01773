// GET /v1/agent/health/service/id/:id and /name/:name (Consul 1.4's agent endpoints for load
// balancers): a local service with its checks and node checks, folded into AggregatedStatus, and
// the HTTP code says it too — 200 passing, 429 warning, 503 critical or maintenance, 404 unknown.
// `?format=text` answers the status word alone.
import { Authorizer } from '@registry/acl';
import { aggregatedStatus, healthStatusCode, type AggregatedStatus } from '../../checks/service-health';
import { forbidden } from '../../errors';
import { route, type Route, type RouteContext } from '../route';
import { readQuery } from '../../schemas/query-options';
import { Type } from '@sinclair/typebox';
import { RequiredText, Text } from '../../schemas/query-fields';
import type { RouteDeps } from './deps';
import { requestAuthorizer } from '../request-authorizer';

interface ServiceChecksInfo {
  AggregatedStatus: AggregatedStatus;
  Service: Record<string, unknown> | null;
  Checks: Record<string, unknown>[] | null;
}

/** `?format=text`: the status word alone. */
const HEALTH_QUERY = readQuery({ format: Text() });
const ID_PARAMS = Type.Object({ id: RequiredText('Missing serviceID') });
const NAME_PARAMS = Type.Object({ name: RequiredText('Missing service Name') });

export function agentHealthRoutes(deps: RouteDeps): Route<any>[] {
  /** Every local service by ID (what /v1/agent/services shows), unfiltered: callers check ACLs. A null-prototype object (local/local-state.ts). */
  const services = () => deps.local.listServices(Authorizer.allowAll()) as Record<string, Record<string, unknown>>;

  /** One instance: its checks and the node's (maintenance included), and their fold. */
  const infoOf = (service: Record<string, unknown>): ServiceChecksInfo => {
    const id = service.ID as string;
    // The agent's checks include its maintenance checks (local/local-state.ts listChecks()).
    const agentChecks = Object.values(deps.local.listChecks(Authorizer.allowAll())) as Record<string, unknown>[];
    const checks = agentChecks.filter((c) => c.ServiceID === '' || c.ServiceID === id);
    const status = aggregatedStatus(checks as { CheckID: string; Status: string }[]);
    return { AggregatedStatus: status, Service: service, Checks: checks };
  };

  const answer = (ctx: RouteContext<any, { format?: string }, any>, code: number, text: string, json: unknown) => {
    ctx.meta.status = code;
    if (ctx.query.format === 'text') {
      ctx.meta.raw = { contentType: 'text/plain; charset=utf-8', data: text };
      return undefined;
    }
    return json;
  };

  return [
    route({
      method: 'GET',
      path: '/v1/agent/health/service/id{/:id}',
      query: HEALTH_QUERY,
      params: ID_PARAMS,
      handle(ctx) {
        const id = ctx.params.id;
        const service = services()[id];
        if (!service) {
          const reason = `ServiceId ${id} not found`;
          return answer(ctx, 404, reason, { AggregatedStatus: 'critical', Service: null, Checks: null });
        }
        if (!requestAuthorizer(deps, ctx).serviceRead(service.Service as string)) throw forbidden();
        const info = infoOf(service);
        return answer(ctx, healthStatusCode(info.AggregatedStatus), info.AggregatedStatus, info);
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/health/service/name{/:name}',
      query: HEALTH_QUERY,
      params: NAME_PARAMS,
      handle(ctx) {
        const name = ctx.params.name;
        if (!requestAuthorizer(deps, ctx).serviceRead(name)) throw forbidden();
        const infos = Object.values(services())
          .filter((s) => s.Service === name)
          .map(infoOf);
        if (infos.length === 0) return answer(ctx, 404, `ServiceName ${name} Not Found`, []);
        // The worst instance decides: passing 200 < warning 429 < critical 503.
        let worst = infos[0]!.AggregatedStatus;
        for (const i of infos) if (healthStatusCode(i.AggregatedStatus) > healthStatusCode(worst)) worst = i.AggregatedStatus;
        return answer(ctx, healthStatusCode(worst), worst, infos);
      },
    }),
  ];
}
