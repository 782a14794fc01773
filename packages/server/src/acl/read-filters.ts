// What catalog and health reads leave out for a token (consul-behaviour §2.10, Consul's aclFilter):
// nodes need node:read, service entries service:read, checks both (node-level checks only the
// node). Lists omit; a single node the token cannot read becomes null.
import { Authorizer } from '@registry/acl';
import type { CatalogNodeOut, CheckServiceNodeOut, HealthCheckOut, NodeOut, ServiceNodeOut } from '@registry/store';

/** ACLs off (the allow-all authorizer) hides nothing: skip the walk. */
const seesAll = (authz: Authorizer) => authz === Authorizer.allowAll();

/**
 * Agent members (`/v1/agent/members`) a token may see: node:read on each member's node. WAN
 * members are named `node.dc`; their node is the name without the datacenter.
 */
export function filterMembers<M extends { Name: string }>(authz: Authorizer, members: M[], wan = false): M[] {
  if (seesAll(authz)) return members;
  return members.filter((m) => authz.nodeRead(wan ? m.Name.replace(/\.[^.]*$/, '') : m.Name));
}

export function filterNodes(authz: Authorizer, nodes: NodeOut[]): NodeOut[] {
  return seesAll(authz) ? nodes : nodes.filter((n) => authz.nodeRead(n.Node));
}

/** `/v1/catalog/services`: the map of service name → tags, by service:read only (as Consul). */
export function filterServiceNames(authz: Authorizer, services: Record<string, string[]>): Record<string, string[]> {
  if (seesAll(authz)) return services;
  const out: Record<string, string[]> = Object.create(null); // keyed by users' service names
  for (const [name, tags] of Object.entries(services)) if (authz.serviceRead(name)) out[name] = tags;
  return out;
}

export function filterServiceNodes(authz: Authorizer, entries: ServiceNodeOut[]): ServiceNodeOut[] {
  return seesAll(authz) ? entries : entries.filter((e) => authz.serviceRead(e.ServiceName) && authz.nodeRead(e.Node));
}

export function filterCatalogNode(authz: Authorizer, node: CatalogNodeOut | null): CatalogNodeOut | null {
  if (node === null || seesAll(authz)) return node;
  if (!authz.nodeRead(node.Node.Node)) return null;
  const services: CatalogNodeOut['Services'] = Object.create(null); // keyed by users' service IDs
  for (const [id, s] of Object.entries(node.Services)) if (authz.serviceRead(s.Service)) services[id] = s;
  return { ...node, Services: services };
}

export function filterChecks(authz: Authorizer, checks: HealthCheckOut[]): HealthCheckOut[] {
  if (seesAll(authz)) return checks;
  return checks.filter((c) => authz.nodeRead(c.Node) && (c.ServiceName === '' || authz.serviceRead(c.ServiceName)));
}

export function filterCheckServiceNodes(authz: Authorizer, entries: CheckServiceNodeOut[]): CheckServiceNodeOut[] {
  if (seesAll(authz)) return entries;
  return entries.filter((e) => authz.nodeRead(e.Node.Node) && authz.serviceRead(e.Service.Service));
}

/** Connect lookups need service:read on the service asked about; without it the answer is empty. */
export function mayLookUpConnect(authz: Authorizer, service: string): boolean {
  return authz.serviceRead(service);
}
