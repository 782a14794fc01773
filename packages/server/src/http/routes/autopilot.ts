// /v1/operator/autopilot/configuration (GET, PUT with ?cas) and /v1/operator/autopilot/health
// (Consul 1.4). The configuration is replicated state; health is computed on the leader from what
// the servers report (cluster/autopilot-health.ts) and answers 429 while the cluster is unhealthy.
import { formatGoDuration, parseGoDuration, type AutopilotRecord, type AutopilotSettings } from '@registry/store';
import type { AutopilotHealthReply } from '../../cluster/autopilot-health';
import { badRequest } from '../../errors';
import { autopilotConfigSchema, type AutopilotConfigBody } from '../../schemas/agent-lifecycle';
import { compileBody } from '../../schemas/validator';
import { demand } from '../request-authorizer';
import { leaderCallAllowed } from '../../endpoints/leader-call-acl';
import { route, type Route } from '../route';
import { writeQuery } from '../../schemas/query-options';
import { Index } from '../../schemas/query-fields';

/** `?cas=<index>`: write only if the configuration's ModifyIndex is still this. */
const CONFIG_PUT_QUERY = writeQuery({ cas: Index((v: string) => `Error parsing cas value: ${JSON.stringify(v)}`) });
import { readInto, type RouteDeps } from './deps';

/** A duration field as Go's ReadableDuration takes it: "10s" or integer nanoseconds. */
function durationNs(v: string | number | null | undefined, field: string, fallback: number): number {
  if (v === undefined || v === null) return fallback;
  const ns = typeof v === 'number' ? v : parseGoDuration(v);
  if (ns === undefined || ns < 0) throw badRequest(`Error parsing autopilot config: ${field}: invalid duration ${JSON.stringify(v)}`);
  return ns;
}

function configOut(r: AutopilotRecord) {
  return {
    CleanupDeadServers: r.CleanupDeadServers,
    LastContactThreshold: formatGoDuration(r.LastContactThresholdNs),
    MaxTrailingLogs: r.MaxTrailingLogs,
    ServerStabilizationTime: formatGoDuration(r.ServerStabilizationTimeNs),
    RedundancyZoneTag: r.RedundancyZoneTag,
    DisableUpgradeMigration: r.DisableUpgradeMigration,
    UpgradeVersionTag: r.UpgradeVersionTag,
    CreateIndex: r.CreateIndex,
    ModifyIndex: r.ModifyIndex,
  };
}

export function autopilotRoutes(deps: RouteDeps): Route<any>[] {
  return [
    route({
      method: 'GET',
      path: '/v1/operator/autopilot/configuration',
      async handle(ctx) {
        return configOut(await readInto(deps, ctx, 'operator.autopilot-configuration', {}));
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/operator/autopilot/configuration',
      query: CONFIG_PUT_QUERY,
      body: compileBody(autopilotConfigSchema),
      async handle(ctx) {
        const b = ctx.body;
        // Fields left out take Go's zero values, as Consul decodes the body into a fresh struct.
        const config: AutopilotSettings = {
          CleanupDeadServers: b.CleanupDeadServers ?? false,
          LastContactThresholdNs: durationNs(b.LastContactThreshold, 'LastContactThreshold', 0),
          MaxTrailingLogs: b.MaxTrailingLogs ?? 0,
          ServerStabilizationTimeNs: durationNs(b.ServerStabilizationTime, 'ServerStabilizationTime', 0),
          RedundancyZoneTag: b.RedundancyZoneTag ?? '',
          DisableUpgradeMigration: b.DisableUpgradeMigration ?? false,
          UpgradeVersionTag: b.UpgradeVersionTag ?? '',
        };
        const cas = ctx.query.cas;
        const { opts, clientGone } = ctx;
        const done = await deps.rpc.apply({ type: 'autopilot.set-config', config, ...(cas === undefined ? {} : { cas }) }, { datacenter: opts.datacenter, token: opts.token, clientGone });
        // Consul answers the CAS outcome only for a CAS write; a plain write is `true`.
        return cas === undefined ? true : done === true;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/operator/autopilot/health',
      async handle(ctx) {
        demand(deps, ctx, (a) => leaderCallAllowed('Operator.AutopilotHealth', a, {}));
        const health: AutopilotHealthReply = await deps.rpc.leader.call('Operator.AutopilotHealth', {}, undefined, ctx.opts.token);
        if (!health.Healthy) ctx.meta.status = 429;
        return health;
      },
    }),
  ];
}
