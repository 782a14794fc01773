// Maintenance mode (Consul's agent EnableNodeMaintenance / EnableServiceMaintenance): a critical
// check `_node_maintenance` on the agent's node, or `_service_maintenance:<id>` on one of its
// services, so that health queries and DNS stop returning it until maintenance is disabled. The
// check is written to the catalog with the agent's authority; the caller's token is checked here.
// As in Consul it is part of the agent's local state: listed by /v1/agent/checks (local-state.ts listChecks)
// and kept under <data-dir>/maintenance, so a restarted agent puts it back (restore()).
import type { Authorizer } from '@registry/acl';
import type { Command, Store } from '@registry/store';
import type { Logger } from '../runtime/logger';
import type { LocalService } from './local-services';
import { forbidden, isClientError, notFound } from '../errors';
import type { LocalStateFiles, PersistedMaintenance } from './local-state-files';
import { NODE_MAINT_CHECK_ID, SERVICE_MAINT_PREFIX } from '../checks/service-health';

const NODE_NAME = 'Node Maintenance Mode';
const SERVICE_NAME = 'Service Maintenance Mode';
const NODE_DEFAULT_REASON = 'Maintenance mode is enabled for this node, but no reason was provided. This is a default message.';
const SERVICE_DEFAULT_REASON = 'Maintenance mode is enabled for this service, but no reason was provided. This is a default message.';
const RETRY_MS = 1_000;

export interface MaintenanceDeps {
  node: string;
  /** This agent's service `id` (local-state.ts). */
  service: (id: string) => LocalService | undefined;
  store: Store;
  apply: (cmd: Command) => Promise<unknown>;
  /** Where maintenance checks are kept across restarts (undefined: nowhere). */
  files?: LocalStateFiles;
  logger?: Logger;
}

/** A maintenance check as /v1/agent/checks and the agent health endpoints show it. */
export interface MaintenanceCheck {
  Node: string;
  CheckID: string;
  Name: string;
  Status: 'critical';
  Notes: string;
  Output: string;
  ServiceID: string;
  ServiceName: string;
  ServiceTags: string[];
  Definition: Record<string, unknown>;
  CreateIndex: number;
  ModifyIndex: number;
}

export function isMaintenanceCheckId(checkId: string): boolean {
  return checkId === NODE_MAINT_CHECK_ID || checkId.startsWith(SERVICE_MAINT_PREFIX);
}

export class Maintenance {
  private stopped = false;

  constructor(private readonly deps: MaintenanceDeps) {}

  async setNode(enable: boolean, reason: string, authz: Authorizer): Promise<void> {
    if (!authz.nodeWrite(this.deps.node)) throw forbidden();
    if (enable) {
      if (this.hasCheck(NODE_MAINT_CHECK_ID)) return; // Consul: enabling twice keeps the first reason
      await this.register({ CheckID: NODE_MAINT_CHECK_ID, Name: NODE_NAME, Notes: reason || NODE_DEFAULT_REASON, ServiceID: '' });
    } else {
      await this.remove(NODE_MAINT_CHECK_ID);
    }
  }

  /** 404 when this agent has no service `id`. */
  async setService(id: string, enable: boolean, reason: string, authz: Authorizer): Promise<void> {
    const service = this.deps.service(id);
    if (!service) throw notFound(`No service registered with ID ${JSON.stringify(id)}`);
    if (!authz.serviceWrite(service.service.Service)) throw forbidden();
    const checkId = SERVICE_MAINT_PREFIX + id;
    if (enable) {
      if (this.hasCheck(checkId)) return;
      await this.register({ CheckID: checkId, Name: SERVICE_NAME, Notes: reason || SERVICE_DEFAULT_REASON, ServiceID: id });
    } else {
      await this.remove(checkId);
    }
  }

  /**
   * The maintenance checks in force, read from the catalog (the replicated truth: a check dropped
   * with its service, or written before a restart, is seen as it is).
   */
  checks(): MaintenanceCheck[] {
    return this.deps.store
      .healthNode(this.deps.node)
      .value.filter((c) => isMaintenanceCheckId(c.CheckID))
      .map((c) => ({
        Node: c.Node,
        CheckID: c.CheckID,
        Name: c.Name,
        Status: 'critical' as const,
        Notes: c.Notes,
        Output: c.Output,
        ServiceID: c.ServiceID,
        ServiceName: c.ServiceName,
        ServiceTags: c.ServiceTags ?? [],
        Definition: (c.Definition as Record<string, unknown> | undefined) ?? {},
        CreateIndex: c.CreateIndex,
        ModifyIndex: c.ModifyIndex,
      }));
  }

  /**
   * After a restart: put back the maintenance checks kept in the data dir, once `ready` (the
   * agent's services restored) and the agent's node is in the catalog. A service maintenance
   * check whose service this agent no longer has is dropped, as Consul drops it with the service.
   */
  async restore(ready: Promise<unknown>): Promise<void> {
    const files = this.deps.files;
    if (!files) return;
    await ready.catch(() => undefined);
    const saved = await files.loadMaintenance();
    if (saved.length === 0) return;
    while (!this.stopped && !this.deps.store.catalogNode(this.deps.node).value) await sleep(100);
    for (const check of saved) {
      if (this.stopped) return;
      if (check.ServiceID !== '' && !this.deps.service(check.ServiceID)) {
        await files.removeMaintenance(check.CheckID);
        continue;
      }
      if (this.hasCheck(check.CheckID)) continue;
      await this.retrying(check.CheckID, () => this.write(check));
    }
  }

  stop(): void {
    this.stopped = true;
  }

  private hasCheck(checkId: string): boolean {
    return this.deps.store.healthNode(this.deps.node).value.some((c) => c.CheckID === checkId);
  }

  private async register(check: PersistedMaintenance): Promise<void> {
    await this.write(check);
    await this.deps.files?.saveMaintenance(check);
  }

  private async remove(checkId: string): Promise<void> {
    if (this.hasCheck(checkId)) await this.deps.apply({ type: 'catalog.deregister', req: { Node: this.deps.node, CheckID: checkId } });
    await this.deps.files?.removeMaintenance(checkId);
  }

  private async write(check: PersistedMaintenance): Promise<void> {
    await this.deps.apply({
      type: 'catalog.register',
      req: { Node: this.deps.node, SkipNodeUpdate: true, Check: { ...check, Node: this.deps.node, Status: 'critical', Output: '' } },
    });
  }

  private async retrying(what: string, attempt: () => Promise<void>): Promise<void> {
    for (let tries = 1; !this.stopped; tries++) {
      try {
        await attempt();
        return;
      } catch (err) {
        if (isClientError(err) || tries >= 30) {
          this.deps.logger?.error({ check: what, err: (err as Error).message }, 'could not restore a maintenance check');
          return;
        }
        await sleep(RETRY_MS);
      }
    }
  }
}

/** For local-state.ts: the files of a deregistered service's maintenance check go with it. */
export function serviceMaintenanceId(serviceId: string): string {
  return SERVICE_MAINT_PREFIX + serviceId;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
