// Maintenance mode (Consul's agent EnableNodeMaintenance / EnableServiceMaintenance): a critical
// check `_node_maintenance` on the agent's node, or `_service_maintenance:<id>` on one of its
// services, so that health queries and DNS stop returning it until maintenance is disabled. The
// check is written to the catalog with the agent's authority; the caller's token is checked here.
import type { Authorizer } from '@registry/acl';
import type { Command, Store } from '@registry/store';
import type { Mesh } from '../connect/mesh';
import { forbidden, notFound } from '../errors';
import { NODE_MAINT_CHECK_ID, SERVICE_MAINT_PREFIX } from './service-health';

const NODE_NAME = 'Node Maintenance Mode';
const SERVICE_NAME = 'Service Maintenance Mode';
const NODE_DEFAULT_REASON = 'Maintenance mode is enabled for this node, but no reason was provided. This is a default message.';
const SERVICE_DEFAULT_REASON = 'Maintenance mode is enabled for this service, but no reason was provided. This is a default message.';

export interface MaintenanceDeps {
  node: string;
  mesh: Mesh;
  store: Store;
  apply: (cmd: Command) => Promise<unknown>;
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
}

export class Maintenance {
  constructor(private readonly deps: MaintenanceDeps) {}

  async setNode(enable: boolean, reason: string, authz: Authorizer): Promise<void> {
    if (!authz.nodeWrite(this.deps.node)) throw forbidden();
    if (enable) {
      if (this.hasCheck(NODE_MAINT_CHECK_ID)) return; // Consul: enabling twice keeps the first reason
      await this.register({ CheckID: NODE_MAINT_CHECK_ID, Name: NODE_NAME, Notes: reason || NODE_DEFAULT_REASON, ServiceID: '' });
    } else if (this.hasCheck(NODE_MAINT_CHECK_ID)) {
      await this.deps.apply({ type: 'catalog.deregister', req: { Node: this.deps.node, CheckID: NODE_MAINT_CHECK_ID } });
    }
  }

  /** 404 when this agent has no service `id`. */
  async setService(id: string, enable: boolean, reason: string, authz: Authorizer): Promise<void> {
    const service = this.deps.mesh.localService(id);
    if (!service) throw notFound(`No service registered with ID ${JSON.stringify(id)}`);
    if (!authz.serviceWrite(service.service.Service)) throw forbidden();
    const checkId = SERVICE_MAINT_PREFIX + id;
    if (enable) {
      if (this.hasCheck(checkId)) return;
      await this.register({ CheckID: checkId, Name: SERVICE_NAME, Notes: reason || SERVICE_DEFAULT_REASON, ServiceID: id });
    } else if (this.hasCheck(checkId)) {
      await this.deps.apply({ type: 'catalog.deregister', req: { Node: this.deps.node, CheckID: checkId } });
    }
  }

  /**
   * The maintenance checks in force, read from the catalog (the replicated truth: a check dropped
   * with its service, or written before a restart, is seen as it is).
   */
  checks(): MaintenanceCheck[] {
    return this.deps.store
      .healthNode(this.deps.node)
      .value.filter((c) => c.CheckID === NODE_MAINT_CHECK_ID || c.CheckID.startsWith(SERVICE_MAINT_PREFIX))
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
      }));
  }

  private hasCheck(checkId: string): boolean {
    return this.deps.store.healthNode(this.deps.node).value.some((c) => c.CheckID === checkId);
  }

  private async register(check: { CheckID: string; Name: string; Notes: string; ServiceID: string }): Promise<void> {
    await this.deps.apply({
      type: 'catalog.register',
      req: { Node: this.deps.node, SkipNodeUpdate: true, Check: { ...check, Node: this.deps.node, Status: 'critical', Output: '' } },
    });
  }
}
