// The bodies of catalog.register / catalog.deregister commands: Consul's capitalised field names,
// after the HTTP layer has normalised key case. Everything is optional on the wire except Node;
// the store validates and fills defaults (see fsm/catalog-register.ts).

export interface ServiceProxyRequest {
  DestinationServiceName?: string;
  DestinationServiceID?: string;
  LocalServiceAddress?: string;
  LocalServicePort?: number;
  Config?: Record<string, unknown> | null;
  Upstreams?: unknown[] | null;
}

export interface ServiceConnectRequest {
  Native?: boolean;
  /** Managed-proxy settings; kept opaque. */
  Proxy?: Record<string, unknown> | null;
  /** Sidecar registration; kept opaque apart from the checks Consul makes on it. */
  SidecarService?: Record<string, unknown> | null;
}

export interface ServiceRequest {
  /** Defaults to Service. */
  ID?: string;
  Service?: string;
  Tags?: string[] | null;
  Address?: string;
  Meta?: Record<string, string> | null;
  Port?: number;
  /** Invalid weights are silently replaced by the default {Passing: 1, Warning: 1}. */
  Weights?: { Passing?: number; Warning?: number } | null;
  EnableTagOverride?: boolean;
  /** "" (typical) or "connect-proxy". */
  Kind?: string;
  /** Deprecated spelling of Proxy.DestinationServiceName. */
  ProxyDestination?: string;
  Proxy?: ServiceProxyRequest | null;
  Connect?: ServiceConnectRequest | null;
}

export interface CheckDefinitionRequest {
  HTTP?: string;
  TLSSkipVerify?: boolean;
  /** Each value an array of strings: checked when the command is applied (check-definition.ts). */
  Header?: Record<string, unknown> | null;
  Method?: string;
  TCP?: string;
  /** Go duration string ("10s") or nanoseconds. */
  Interval?: string | number;
  Timeout?: string | number;
  DeregisterCriticalServiceAfter?: string | number;
}

export interface CheckRequest {
  /** Defaults to the request's Node; must match it. */
  Node?: string;
  /** Defaults to Name. */
  CheckID?: string;
  Name?: string;
  /** Defaults to "critical"; not validated (Consul stores any string). */
  Status?: string;
  Notes?: string;
  Output?: string;
  /** A service on the same node (existing or in this request), or "" for a node-level check. */
  ServiceID?: string;
  Definition?: CheckDefinitionRequest | null;
}

export interface RegisterRequest {
  /** Ignored by the store (forwarding is the server's business); nodes get the store's datacenter. */
  Datacenter?: string;
  /** Node UUID, optional. */
  ID?: string;
  Node: string;
  /** Required unless SkipNodeUpdate. */
  Address?: string;
  TaggedAddresses?: Record<string, string> | null;
  NodeMeta?: Record<string, string> | null;
  Service?: ServiceRequest | null;
  Check?: CheckRequest | null;
  Checks?: CheckRequest[] | null;
  /** Leave an existing node's fields untouched (the node is still created if missing). */
  SkipNodeUpdate?: boolean;
}

export interface DeregisterRequest {
  Datacenter?: string;
  Node: string;
  /** Precedence: ServiceID, then CheckID, else the whole node. */
  ServiceID?: string;
  CheckID?: string;
}
