// Stored rows → the output shapes of outputs.ts. Every call builds fresh objects (deep copies),
// so callers may mutate or serialise results without touching the store.
import { clonePlain } from '../plain-data';
import { CONNECT_PROXY } from './service-definition';
import type { CheckRecord, NodeRecord, ServiceRecord } from './records';
import type { HealthCheckOut, NodeOut, NodeServiceOut, ServiceNodeOut } from './outputs';

function mapOrNull(m: Readonly<Record<string, string>> | null): Record<string, string> | null {
  return m === null ? null : { ...m };
}

function proxyDestination(s: ServiceRecord): string {
  return s.Kind === CONNECT_PROXY ? (s.Proxy.DestinationServiceName ?? '') : '';
}

export function nodeOut(n: NodeRecord): NodeOut {
  return {
    ID: n.ID,
    Node: n.Node,
    Address: n.Address,
    Datacenter: n.Datacenter,
    TaggedAddresses: mapOrNull(n.TaggedAddresses),
    Meta: mapOrNull(n.Meta),
    CreateIndex: n.CreateIndex,
    ModifyIndex: n.ModifyIndex,
  };
}

export function nodeServiceOut(s: ServiceRecord): NodeServiceOut {
  return {
    ...(s.Kind !== '' ? { Kind: s.Kind } : {}),
    ID: s.ID,
    Service: s.Service,
    Tags: [...s.Tags],
    Address: s.Address,
    Meta: { ...s.Meta },
    Port: s.Port,
    Weights: { ...s.Weights },
    EnableTagOverride: s.EnableTagOverride,
    ProxyDestination: proxyDestination(s),
    Proxy: clonePlain(s.Proxy),
    Connect: clonePlain(s.Connect),
    CreateIndex: s.CreateIndex,
    ModifyIndex: s.ModifyIndex,
  };
}

export function serviceNodeOut(n: NodeRecord, s: ServiceRecord): ServiceNodeOut {
  return {
    ID: n.ID,
    Node: n.Node,
    Address: n.Address,
    Datacenter: n.Datacenter,
    TaggedAddresses: mapOrNull(n.TaggedAddresses),
    NodeMeta: mapOrNull(n.Meta),
    ServiceKind: s.Kind,
    ServiceID: s.ID,
    ServiceName: s.Service,
    ServiceTags: [...s.Tags],
    ServiceAddress: s.Address,
    ServiceWeights: { ...s.Weights },
    ServiceMeta: { ...s.Meta },
    ServicePort: s.Port,
    ServiceEnableTagOverride: s.EnableTagOverride,
    ServiceProxyDestination: proxyDestination(s),
    ServiceProxy: clonePlain(s.Proxy),
    ServiceConnect: clonePlain(s.Connect),
    CreateIndex: s.CreateIndex,
    ModifyIndex: s.ModifyIndex,
  };
}

/** `service` is the check's service (undefined for node-level checks); its ID, name and tags are shown. */
export function healthCheckOut(n: NodeRecord, c: CheckRecord, service: ServiceRecord | undefined): HealthCheckOut {
  return {
    Node: n.Node,
    CheckID: c.CheckID,
    Name: c.Name,
    Status: c.Status,
    Notes: c.Notes,
    Output: c.Output,
    ServiceID: service?.ID ?? '',
    ServiceName: service?.Service ?? '',
    ServiceTags: service ? [...service.Tags] : [],
    Definition: clonePlain(c.Definition),
    CreateIndex: c.CreateIndex,
    ModifyIndex: c.ModifyIndex,
  };
}
