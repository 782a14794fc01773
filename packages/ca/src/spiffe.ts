/**
 * SPIFFE IDs as the mesh uses them (DECISIONS.md):
 *   service  spiffe://<trust-domain>/ns/<ns>/dc/<dc>/svc/<service>
 *   agent    spiffe://<trust-domain>/agent/client/dc/<dc>/id/<node-id>
 *   signing  spiffe://<trust-domain>            (the URI SAN of a root certificate)
 * The trust domain is `<cluster-id>.registry`.
 */
import { SpiffeIdError } from './errors';

export interface ServiceSpiffeId {
  kind: 'service';
  trustDomain: string;
  namespace: string;
  datacenter: string;
  service: string;
}

export interface AgentSpiffeId {
  kind: 'agent';
  trustDomain: string;
  datacenter: string;
  nodeId: string;
}

/** The bare trust domain, carried by root certificates; it identifies no workload. */
export interface SigningSpiffeId {
  kind: 'signing';
  trustDomain: string;
}

export type SpiffeId = ServiceSpiffeId | AgentSpiffeId | SigningSpiffeId;

const TRUST_DOMAIN_SUFFIX = 'registry';

/** The trust domain of a cluster: lower-case `<cluster-id>.registry`. */
export function trustDomainFor(clusterId: string): string {
  if (clusterId === '') throw new Error('cluster id must not be empty');
  return `${clusterId}.${TRUST_DOMAIN_SUFFIX}`.toLowerCase();
}

export function signingURI(trustDomain: string): string {
  return `spiffe://${checkedTrustDomain(trustDomain)}`;
}

export function serviceURI(trustDomain: string, datacenter: string, service: string, namespace = 'default'): string {
  return `spiffe://${checkedTrustDomain(trustDomain)}/ns/${segment(namespace, 'namespace')}` +
    `/dc/${segment(datacenter, 'datacenter')}/svc/${segment(service, 'service')}`;
}

export function agentURI(trustDomain: string, datacenter: string, nodeId: string): string {
  return `spiffe://${checkedTrustDomain(trustDomain)}/agent/client/dc/${segment(datacenter, 'datacenter')}` +
    `/id/${segment(nodeId, 'node id')}`;
}

/** The URI form of any parsed ID; `formatSpiffeId(parseSpiffeURI(u))` normalises escaping. */
export function formatSpiffeId(id: SpiffeId): string {
  switch (id.kind) {
    case 'service': return serviceURI(id.trustDomain, id.datacenter, id.service, id.namespace);
    case 'agent': return agentURI(id.trustDomain, id.datacenter, id.nodeId);
    case 'signing': return signingURI(id.trustDomain);
  }
}

// Scheme, authority, optional path; a query or fragment makes it something else.
const URI_SHAPE = /^spiffe:\/\/([^/?#]*)(\/[^?#]*)?$/i;
const SERVICE_PATH = /^\/ns\/([^/]+)\/dc\/([^/]+)\/svc\/([^/]+)$/;
const AGENT_PATH = /^\/agent\/client\/dc\/([^/]+)\/id\/([^/]+)$/;
// A DNS-like host: what a trust domain can be. No user info, no port.
const TRUST_DOMAIN_SHAPE = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;

/**
 * Parse a SPIFFE URI into one of the known ID kinds, or throw SpiffeIdError saying why.
 * Path segments are percent-decoded. As in Consul, neither the trust domain nor the
 * datacenter is compared with anything here; callers decide what they trust.
 */
export function parseSpiffeURI(uri: string): SpiffeId {
  const shape = URI_SHAPE.exec(uri);
  if (shape === null) throw new SpiffeIdError(`not a SPIFFE URI (want spiffe://<trust-domain>/…): ${JSON.stringify(uri)}`);
  const trustDomain = shape[1]!;
  if (!TRUST_DOMAIN_SHAPE.test(trustDomain)) {
    throw new SpiffeIdError(`SPIFFE URI has an invalid trust domain ${JSON.stringify(trustDomain)}`);
  }
  const path = shape[2] ?? '';
  if (path === '' || path === '/') return { kind: 'signing', trustDomain };

  const svc = SERVICE_PATH.exec(path);
  if (svc !== null) {
    return {
      kind: 'service', trustDomain,
      namespace: decoded(svc[1]!, uri), datacenter: decoded(svc[2]!, uri), service: decoded(svc[3]!, uri),
    };
  }
  const agent = AGENT_PATH.exec(path);
  if (agent !== null) {
    return { kind: 'agent', trustDomain, datacenter: decoded(agent[1]!, uri), nodeId: decoded(agent[2]!, uri) };
  }
  throw new SpiffeIdError(`SPIFFE URI path is neither a service nor an agent identity: ${JSON.stringify(uri)}`);
}

function decoded(raw: string, uri: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new SpiffeIdError(`SPIFFE URI has a malformed percent-escape: ${JSON.stringify(uri)}`);
  }
}

function checkedTrustDomain(trustDomain: string): string {
  if (!TRUST_DOMAIN_SHAPE.test(trustDomain)) {
    throw new SpiffeIdError(`invalid trust domain ${JSON.stringify(trustDomain)}`);
  }
  return trustDomain;
}

function segment(value: string, what: string): string {
  if (value === '') throw new SpiffeIdError(`SPIFFE ID ${what} must not be empty`);
  return encodeURIComponent(value);
}
