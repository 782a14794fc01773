// An agent-local service's health as load balancers ask for it (Consul's
// /v1/agent/health/service/*): the checks of the service and of its node, folded into one status
// (api.HealthChecks.AggregatedStatus) and an HTTP code a balancer can act on without parsing.
export const NODE_MAINT_CHECK_ID = '_node_maintenance';
/** The node check the servers keep for every agent (cluster/server-health.ts, client-liveness.ts): never the agent's own. */
export const SERF_CHECK_ID = 'serfHealth';
export const SERVICE_MAINT_PREFIX = '_service_maintenance:';

export type AggregatedStatus = 'passing' | 'warning' | 'critical' | 'maintenance';

/** The fields of a check the fold needs. */
export interface CheckStatusRow {
  CheckID: string;
  Status: string;
}

/** Maintenance wins, then critical, warning, passing; no checks at all is passing. */
export function aggregatedStatus(checks: readonly CheckStatusRow[]): AggregatedStatus {
  let warning = false;
  let critical = false;
  let maintenance = false;
  for (const c of checks) {
    if (c.CheckID === NODE_MAINT_CHECK_ID || c.CheckID.startsWith(SERVICE_MAINT_PREFIX)) {
      maintenance = true;
      continue;
    }
    if (c.Status === 'warning') warning = true;
    else if (c.Status !== 'passing') critical = true; // an unknown status is no reason to send traffic
  }
  if (maintenance) return 'maintenance';
  if (critical) return 'critical';
  if (warning) return 'warning';
  return 'passing';
}

/** 200 passing, 429 warning (still serving, back off), 503 critical or in maintenance. */
export function healthStatusCode(status: AggregatedStatus): number {
  if (status === 'passing') return 200;
  if (status === 'warning') return 429;
  return 503;
}
