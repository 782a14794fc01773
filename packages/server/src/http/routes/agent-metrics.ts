// GET /v1/agent/metrics: this agent's metrics, as JSON in Consul's shape or, with
// `?format=prometheus`, in Prometheus' text exposition format 0.0.4 (docs/operations.md, Monitoring).
import { route, type Route } from '../route';
import { readQuery } from '../../schemas/query-options';
import { Text } from '../../schemas/query-fields';
import type { RouteDeps } from './deps';
import { demand } from '../request-authorizer';
import { serverError } from '../../errors';

/** Consul's answer when the Prometheus format is asked for but switched off. */
export const PROMETHEUS_DISABLED = 'Prometheus is not enabled since its retention time is not positive';

const METRICS_QUERY = readQuery({ format: Text() });

export function agentMetricsRoutes(deps: RouteDeps): Route<any>[] {
  const node = deps.agent.nodeName;
  return [
    route({
      method: 'GET',
      path: '/v1/agent/metrics',
      query: METRICS_QUERY,
      async handle(ctx) {
        demand(deps, ctx, (a) => a.agentRead(node));
        const metrics = deps.metrics;
        if (!metrics) throw serverError('metrics are not collected by this agent');
        if (ctx.query.format !== 'prometheus') return metrics.summary();
        if (!metrics.prometheusEnabled) {
          ctx.meta.status = 415;
          ctx.meta.raw = { contentType: 'text/plain; charset=utf-8', data: PROMETHEUS_DISABLED };
          return undefined;
        }
        ctx.meta.raw = { contentType: metrics.prometheusContentType, data: await metrics.prometheus() };
        return undefined;
      },
    }),
  ];
}
