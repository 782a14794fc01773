// What reads return: Consul's JSON field names in Consul's field order (agent/structs/structs.go),
// so the HTTP layer can serialise them as they are. Every value is a fresh object.

export interface Weights {
  Passing: number;
  Warning: number;
}

/** Consul's ConnectProxyConfig: every field omitted when empty, so a typical service has {}. */
export interface ProxyOut {
  DestinationServiceName?: string;
  DestinationServiceID?: string;
  LocalServiceAddress?: string;
  LocalServicePort?: number;
  Config?: Record<string, unknown>;
  Upstreams?: unknown[];
}

/** Consul's ServiceConnect: every field omitted when empty. */
export interface ConnectOut {
  Native?: boolean;
  Proxy?: Record<string, unknown>;
  SidecarService?: Record<string, unknown>;
}

/** A check definition: only the non-empty fields, durations as Go duration strings. */
export interface CheckDefinitionOut {
  HTTP?: string;
  TLSSkipVerify?: boolean;
  Header?: Record<string, string[]>;
  Method?: string;
  TCP?: string;
  Interval?: string;
  Timeout?: string;
  DeregisterCriticalServiceAfter?: string;
}

export interface NodeOut {
  ID: string;
  Node: string;
  Address: string;
  Datacenter: string;
  TaggedAddresses: Record<string, string> | null;
  Meta: Record<string, string> | null;
  CreateIndex: number;
  ModifyIndex: number;
}

/** A service as registered on a node (catalog/node, health/service). `Kind` is absent when "". */
export interface NodeServiceOut {
  Kind?: string;
  ID: string;
  Service: string;
  Tags: string[];
  Address: string;
  Meta: Record<string, string>;
  Port: number;
  Weights: Weights;
  EnableTagOverride: boolean;
  /** Deprecated duplicate of Proxy.DestinationServiceName ("" for typical services). */
  ProxyDestination: string;
  Proxy: ProxyOut;
  Connect: ConnectOut;
  CreateIndex: number;
  ModifyIndex: number;
}

/** One service instance with its node flattened in (catalog/service, catalog/connect). */
export interface ServiceNodeOut {
  ID: string;
  Node: string;
  Address: string;
  Datacenter: string;
  TaggedAddresses: Record<string, string> | null;
  NodeMeta: Record<string, string> | null;
  ServiceKind: string;
  ServiceID: string;
  ServiceName: string;
  ServiceTags: string[];
  ServiceAddress: string;
  ServiceWeights: Weights;
  ServiceMeta: Record<string, string>;
  ServicePort: number;
  ServiceEnableTagOverride: boolean;
  ServiceProxyDestination: string;
  ServiceProxy: ProxyOut;
  ServiceConnect: ConnectOut;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface HealthCheckOut {
  Node: string;
  CheckID: string;
  Name: string;
  Status: string;
  Notes: string;
  Output: string;
  ServiceID: string;
  ServiceName: string;
  ServiceTags: string[];
  Definition: CheckDefinitionOut;
  CreateIndex: number;
  ModifyIndex: number;
}

/** health/service: the node, the instance, and its checks (node-level first, then the instance's). */
export interface CheckServiceNodeOut {
  Node: NodeOut;
  Service: NodeServiceOut;
  Checks: HealthCheckOut[];
}

export interface CatalogNodeOut {
  Node: NodeOut;
  Services: Record<string, NodeServiceOut>;
}
