// Anti-entropy (Consul's agent/local + agent/ae), on client and server agents alike (a server reads
// its own store, a client its node mirror): the agent owns its services and checks, and each pass makes
// the catalog's rows for its node equal to them — a service or check missing or changed there is
// written again, one the agent does not have is removed. The node itself and its serfHealth check
// are the servers' (cluster/client-liveness.ts), and maintenance checks live in the catalog only
// (maintenance.ts): both are left alone. A pass that finds nothing different writes nothing.
//
// EnableTagOverride: the catalog's tags win for such a service (a catalog client may retag it),
// so tags are not compared and a repair keeps the catalog's.
//
// Check results: their status is compared (the check results' sync, catalog-sync.ts,
// writes changes at once); an output-only difference is not, since that sync defers output-only
// updates on purpose (check_update_interval).
//
// The passes run on the agent's own timer, so they keep their own failures (issue 31): a pass that
// fails or throws (no server reachable, a write refused for another reason than ACLs, a bug) is
// reported — logged by `agent.runners`, counted as registry_runner_failures_total{runner="anti-entropy"}
// — and the next pass runs at the usual interval; nothing of it reaches the process's last-resort handler.
import type { CatalogNodeOut, CheckRequest, Command, HealthCheckOut, NodeServiceOut, ServiceRequest } from '@registry/store';
import type { Logger } from '../runtime/logger';
import { logOnlyFailures, type RunnerFailures } from '../runtime/runner-failures';
import type { LocalService } from './local-services';
import { isMaintenanceCheckId } from './maintenance';
import { SERF_CHECK_ID } from '../checks/service-health';

import { RegistryError } from '../errors';

/** The catalog's rows for this agent's node: the store on a server, the node mirror on a client. */
export interface NodeView {
  node: CatalogNodeOut | null;
  checks: HealthCheckOut[];
}

export interface AntiEntropyDeps {
  node: string;
  /** The agent's services and its checks' wanted rows (local-state.ts). */
  services(): LocalService[];
  checks(): CheckRequest[];
  /** The servers' rows for this node, freshly read. */
  view(): Promise<NodeView>;
  apply(cmd: Command): Promise<unknown>;
  logger: Logger;
  /** Where a failed pass is reported (runtime/runner-failures.ts); logged only when absent. */
  failures?: RunnerFailures;
  /**
   * Catalog services of this node that are not the agent's and stay: on a server, the `registry`
   * service its leader registers for every server (cluster/server-health.ts). None on a client.
   */
  keepService?: (id: string) => boolean;
}

export interface SyncResult {
  writes: number;
}

const sameList = (a: readonly string[] | null | undefined, b: readonly string[] | null | undefined) => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
const sameMap = (a: Record<string, string> | null | undefined, b: Record<string, string> | null | undefined) => {
  const x = a ?? {};
  const y = b ?? {};
  return Object.keys(x).length === Object.keys(y).length && Object.keys(x).every((k) => x[k] === y[k]);
};

/** Whether the catalog's row says what the agent's definition says (ID is the key, not compared). */
export function serviceInSync(want: ServiceRequest, have: NodeServiceOut): boolean {
  return (
    (want.Service ?? '') === have.Service &&
    (want.EnableTagOverride === true || sameList(want.Tags, have.Tags)) &&
    (want.Address ?? '') === have.Address &&
    (want.Port ?? 0) === have.Port &&
    sameMap(want.Meta, have.Meta) &&
    (want.Kind ?? '') === (have.Kind ?? '') &&
    (want.EnableTagOverride ?? false) === have.EnableTagOverride
  );
}

export function checkInSync(want: CheckRequest, have: HealthCheckOut): boolean {
  return (
    (want.Status ?? 'critical') === have.Status &&
    (want.Name ?? '') === have.Name &&
    (want.ServiceID ?? '') === have.ServiceID &&
    (want.Notes ?? '') === have.Notes
  );
}


export class AntiEntropy {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SyncResult> | null = null;
  /** Passes run and writes made since start (stats, tests). */
  passes = 0;
  writes = 0;
  /** Writes the servers refused for want of ACL rights (the agent token's). */
  blocked = 0;

  private readonly failures: RunnerFailures;

  constructor(private readonly d: AntiEntropyDeps) {
    this.failures = d.failures ?? logOnlyFailures(d.logger);
  }

  start(intervalMs: number): void {
    const loop = () => {
      // sync() inside the promise chain: a pass that throws before its first await is a rejection too.
      void Promise.resolve()
        .then(() => this.sync())
        .catch((err: unknown) => {
          try {
            this.failures.failed('anti-entropy', this.d.node, `pass failed: ${err instanceof Error ? err.message : String(err)}; the next one in ${intervalMs} ms`);
          } catch {
            // Reported as far as it could be; the loop goes on.
          }
        })
        .finally(() => {
          if (this.timer) this.timer = setTimeout(loop, intervalMs);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One pass; a pass asked for while one runs joins it. */
  sync(): Promise<SyncResult> {
    if (!this.running) this.running = this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<SyncResult> {
    const view = await this.d.view();
    // The node is registered by the servers on the first heartbeat; until then there is nothing to compare with.
    if (!view.node) return { writes: 0 };
    const node = this.d.node;
    const catalog = view.node.Services;
    let writes = 0;
    const write = async (cmd: Command, what: object) => {
      this.d.logger.info(what, 'anti-entropy: repairing the catalog');
      try {
        await this.d.apply(cmd);
      } catch (err) {
        // The agent token may not write this row (Consul: "blocked by ACLs"): say so and go on
        // with the others; the next pass tries again, at the usual interval.
        if (!(err instanceof RegistryError && err.kind === 'PermissionDenied')) throw err;
        this.d.logger.warn({ ...what, err: err.message }, 'anti-entropy: the servers refused the agent token for this write; check acl.tokens.agent');
        this.blocked++;
        return;
      }
      writes++;
    };
    const mine = this.d.services();
    const mineIds = new Set(mine.map((s) => s.service.ID));
    for (const s of mine) {
      const have = catalog[s.service.ID];
      if (have && serviceInSync(s.service, have)) continue;
      const service = s.service.EnableTagOverride && have ? { ...s.service, Tags: have.Tags } : s.service;
      await write({ type: 'catalog.register', req: { Node: node, SkipNodeUpdate: true, Service: service } }, { service: s.service.ID, reason: have ? 'changed' : 'missing' });
    }
    for (const id of Object.keys(catalog)) {
      if (!mineIds.has(id) && !this.d.keepService?.(id)) await write({ type: 'catalog.deregister', req: { Node: node, ServiceID: id } }, { service: id, reason: 'not on this agent' });
    }
    const checks = this.d.checks();
    const rows = new Map(view.checks.map((c) => [c.CheckID, c]));
    const checkIds = new Set(checks.map((c) => c.CheckID));
    for (const c of checks) {
      const have = rows.get(c.CheckID ?? '');
      if (have && checkInSync(c, have)) continue;
      await write({ type: 'catalog.register', req: { Node: node, SkipNodeUpdate: true, Check: c } }, { check: c.CheckID, reason: have ? 'changed' : 'missing' });
    }
    for (const row of view.checks) {
      // The servers' serfHealth and maintenance checks (which live only in the catalog) are never removed.
      if (row.CheckID === SERF_CHECK_ID || isMaintenanceCheckId(row.CheckID) || checkIds.has(row.CheckID)) continue;
      // A service's check goes with the service (deregistered above) when the service was not ours,
      // and a kept service's checks are not ours to judge.
      if (row.ServiceID && !mineIds.has(row.ServiceID)) continue;
      await write({ type: 'catalog.deregister', req: { Node: node, CheckID: row.CheckID } }, { check: row.CheckID, reason: 'not on this agent' });
    }
    this.passes++;
    this.writes += writes;
    if (writes > 0) await this.d.view();
    return { writes };
  }
}
