// What the agent's checks resume with after a restart (local-state.ts load): a TTL check its saved,
// unexpired state (local-state-files.ts), any other check the catalog's last row for it, so that a
// restart does not flap a healthy service to its definition's initial status.
import type { HealthCheckOut } from '@registry/store';
import { isCheckStatus, type CheckSpec, type CheckStatus } from '../checks/check-spec';
import type { CheckState } from './catalog-sync';
import type { LocalStateFiles } from './local-state-files';
import { servicesFromDefinition, type ServiceDefinition } from './local-services';

/** A state to start from instead of the definition's (on restart), with the TTL left. */
export interface StartState extends CheckState {
  status: CheckStatus;
  ttlLeftMs?: number;
}

export interface RestoreSources {
  files: LocalStateFiles | undefined;
  /** The catalog's rows for this agent's node. */
  rows(): HealthCheckOut[];
}

/** What each check resumes with after a restart: a TTL check's unexpired saved state; for HTTP/TCP, the catalog's row. */
export async function restoredStates(from: RestoreSources, specs: CheckSpec[]): Promise<Map<string, StartState>> {
  const out = new Map<string, StartState>();
  const rows = new Map(from.rows().map((c) => [c.CheckID, c]));
  for (const spec of specs) {
    if (spec.kind.type === 'ttl') {
      const saved = await from.files?.loadCheckState(spec.CheckID);
      // Expires is a wall-clock time (Consul's persisted check state): a clock stepped back since
      // it was written would otherwise keep the check passing for the step's length. No TTL
      // resumes with more than the TTL itself (issue #36).
      const left = saved ? Math.min(saved.Expires - Date.now(), spec.kind.ttlMs) : 0;
      if (saved && left > 0 && isCheckStatus(saved.Status)) out.set(spec.CheckID, { status: saved.Status, output: saved.Output, ttlLeftMs: left });
    } else {
      const row = rows.get(spec.CheckID);
      if (row && isCheckStatus(row.Status)) out.set(spec.CheckID, { status: row.Status, output: row.Output });
    }
  }
  return out;
}

/** A service definition whose checks start from the given statuses (by the IDs they will get). */
export function withStatuses(def: ServiceDefinition, start: Map<string, StartState>): ServiceDefinition {
  if (start.size === 0) return def;
  const defs = [...(def.Check ? [def.Check] : []), ...(def.Checks ?? [])];
  const specs = servicesFromDefinition(def, new Map(), { allowManagedApiRegistration: true })[0]!.checks;
  const patched = defs.map((c, i) => {
    const s = start.get(specs[i]!.CheckID);
    return s ? { ...c, Status: s.status } : c;
  });
  return def.Check ? { ...def, Check: patched[0], Checks: def.Checks ? patched.slice(1) : def.Checks } : { ...def, Checks: patched };
}
