// The catalog endpoint's leader-side checks (Consul's Catalog.Register/Deregister before raftApply):
// who may register and deregister what (consul-behaviour §2.9, Consul's vetRegisterWithACL and
// vetDeregisterWithACL), checked on the leader against its current catalog. Its reads are in
// catalog-reads.ts.
import type { Authorizer } from '@registry/acl';
import type { CheckRequest, DeregisterRequest, NodeOut, NodeServiceOut, RegisterRequest, Store } from '@registry/store';
import { badRequest, forbidden } from '../errors';

const fold = (s: string) => s.toLowerCase();

function allowOrDeny(allowed: boolean): void {
  if (!allowed) throw forbidden();
}

function sameMap(a: Readonly<Record<string, string>> | null | undefined, b: Readonly<Record<string, string>> | null | undefined): boolean {
  const ae = Object.entries(a ?? {});
  const be = b ?? {};
  return ae.length === Object.keys(be).length && ae.every(([k, v]) => be[k] === v);
}

/**
 * Whether the request would change the node's own fields (Consul's ChangesNode). A request without
 * an ID keeps the node's ID in this registry, so only a different ID counts.
 */
export function changesNode(req: RegisterRequest, node: NodeOut | undefined): boolean {
  if (!node) return true;
  if (req.SkipNodeUpdate) return false;
  return (
    (req.ID !== undefined && req.ID !== '' && fold(req.ID) !== fold(node.ID)) ||
    req.Node !== node.Node ||
    (req.Address ?? '') !== node.Address ||
    !sameMap(req.TaggedAddresses, node.TaggedAddresses) ||
    !sameMap(req.NodeMeta, node.Meta)
  );
}

function existingNode(store: Store, name: string): { node?: NodeOut; services: NodeServiceOut[] } {
  const found = store.catalogNode(name).value;
  // catalogNode also finds nodes by ID; only the node of this name counts here.
  if (!found || fold(found.Node.Node) !== fold(name)) return { services: [] };
  return { node: found.Node, services: Object.values(found.Services) };
}

function serviceById(services: NodeServiceOut[], id: string): NodeServiceOut | undefined {
  return services.find((s) => fold(s.ID) === fold(id));
}

export function authorizeRegister(req: RegisterRequest, authz: Authorizer, store: Store): void {
  const { node, services } = existingNode(store, req.Node);
  if (changesNode(req, node)) allowOrDeny(authz.nodeWrite(req.Node));

  const svc = req.Service ?? undefined;
  const svcId = svc ? svc.ID || svc.Service || '' : '';
  if (svc) {
    allowOrDeny(authz.serviceWrite(svc.Service ?? ''));
    if (svc.Kind === 'connect-proxy') {
      allowOrDeny(authz.serviceWrite(svc.Proxy?.DestinationServiceName || svc.ProxyDestination || ''));
    }
    // Re-registering an ID that holds another service overwrites it: that one needs write too.
    const overwritten = serviceById(services, svcId);
    if (overwritten) allowOrDeny(authz.serviceWrite(overwritten.Service));
  }

  const checks: CheckRequest[] = [...(req.Check ? [req.Check] : []), ...(req.Checks ?? [])];
  for (const check of checks) {
    if (check.Node && fold(check.Node) !== fold(req.Node)) throw forbidden();
    if (!check.ServiceID) {
      allowOrDeny(authz.nodeWrite(req.Node));
      continue;
    }
    if (svc && fold(check.ServiceID) === fold(svcId)) continue; // vetted with the service above
    const other = serviceById(services, check.ServiceID);
    if (!other) throw badRequest(`Unknown service '${check.ServiceID}' for check '${check.CheckID || check.Name || ''}'`);
    allowOrDeny(authz.serviceWrite(other.Service));
  }
}

/** The same precedence as the store applies: ServiceID, then CheckID, else the whole node. */
export function authorizeDeregister(req: DeregisterRequest, authz: Authorizer, store: Store): void {
  if (req.ServiceID) {
    const service = serviceById(existingNode(store, req.Node).services, req.ServiceID);
    if (!service) throw badRequest(`Unknown service '${req.ServiceID}'`);
    allowOrDeny(authz.serviceWrite(service.Service));
    return;
  }
  if (req.CheckID) {
    const check = store.healthNode(req.Node).value.find((c) => fold(c.CheckID) === fold(req.CheckID!) && fold(c.Node) === fold(req.Node));
    if (!check) throw badRequest(`Unknown check '${req.CheckID}'`);
    allowOrDeny(check.ServiceID ? authz.serviceWrite(check.ServiceName) : authz.nodeWrite(req.Node));
    return;
  }
  allowOrDeny(authz.nodeWrite(req.Node));
}
