// The agent's own services (Consul's agent/local state): what was registered through
// /v1/agent/service/register, with the sidecar and managed proxies derived from it. Pure apart from
// the change listeners: registration into the catalog and process management are the caller's.
import { createHash, randomUUID } from 'node:crypto';
import type { RegisterRequest, ServiceRequest } from '@registry/store';
import { badRequest } from '../errors';
import type { AgentCheckDefinition } from '../schemas/agent-check';
import { catalogCheckOf, checkSpecOf, isCheckStatus, type CheckSpec } from '../checks/check-spec';

export const CONNECT_PROXY = 'connect-proxy';
/** Consul's defaults; `ports.sidecar_*_port` and `ports.proxy_*_port` move them (RegisterPolicy). */
const SIDECAR_PORTS: [number, number] = [21000, 21255];
const MANAGED_PORTS: [number, number] = [20000, 20255];

export type { AgentCheckDefinition } from '../schemas/agent-check';

/**
 * `PUT /v1/agent/service/register` body (ServiceDefinition), keys already canonicalised: the
 * catalog's service fields, named `Name` instead of `Service`, plus the agent-only parts
 * (managed proxy, sidecar, checks).
 */
export interface ServiceDefinition extends Omit<ServiceRequest, 'Service' | 'Connect'> {
  Name?: string;
  Connect?: {
    Native?: boolean;
    Proxy?: { ExecMode?: string; Command?: string[] | null; Config?: Record<string, unknown> | null; Upstreams?: unknown[] | null } | null;
    SidecarService?: ServiceDefinition | null;
  } | null;
  Check?: AgentCheckDefinition | null;
  Checks?: AgentCheckDefinition[] | null;
}

/** A service held by this agent, in the catalog's request shape. */
export interface LocalService {
  service: ServiceRequest & { ID: string; Service: string };
  /** Its checks, as defined (run by the agent's checks; registered here with their initial status). */
  checks: CheckSpec[];
  /** For a managed proxy: what runs it. */
  managed?: { targetId: string; execMode: string; command: string[]; token: string; config: Record<string, unknown>; upstreams: unknown[] };
  /** The service this one was derived from (sidecar or managed proxy), removed with it. */
  parentId?: string;
}

export interface RegisterPolicy {
  allowManagedApiRegistration: boolean;
  /** Ports for managed proxies (`ports.proxy_min_port`..`proxy_max_port`); default 20000-20255. */
  managedPorts?: { min: number; max: number };
  /** Ports for sidecar services (`ports.sidecar_min_port`..`sidecar_max_port`); default 21000-21255. */
  sidecarPorts?: { min: number; max: number };
}

const rangeOf = (r: { min: number; max: number } | undefined, fallback: [number, number]): [number, number] => (r ? [r.min, r.max] : fallback);

function validateWeights(w: ServiceDefinition['Weights']): void {
  if (!w) return;
  if (w.Passing !== undefined && w.Passing < 1) throw badRequest('Invalid Weights: Passing must be greater than 0');
  if (w.Warning !== undefined && w.Warning < 0) throw badRequest('Invalid Weights: Warning must be greater or equal than 0');
}

function checksOf(def: ServiceDefinition, id: string, name: string): LocalService['checks'] {
  const defs = [...(def.Check ? [def.Check] : []), ...(def.Checks ?? [])];
  for (const c of defs) {
    if (c.Status && !isCheckStatus(c.Status)) throw badRequest("Status for checks must 'passing', 'warning', 'critical'");
  }
  return defs.map((c, i) => {
    const checkId = c.CheckID || c.ID || (defs.length > 1 ? `service:${id}:${i + 1}` : `service:${id}`);
    return checkSpecOf(c, { CheckID: checkId, Name: c.Name || `Service '${name}' check`, ServiceID: id });
  });
}

function freePort(range: [number, number], taken: Set<number>): number {
  for (let p = range[0]; p <= range[1]; p++) if (!taken.has(p)) return p;
  throw badRequest('no free port in the proxy port range');
}

/**
 * Turn one registration into the services it makes (the service itself, then a sidecar or a managed
 * proxy). Throws 400s with Consul's texts for invalid definitions.
 */
export function servicesFromDefinition(def: ServiceDefinition, others: ReadonlyMap<string, LocalService>, policy: RegisterPolicy): LocalService[] {
  const name = def.Name ?? '';
  if (!name) throw badRequest('Missing service name');
  const id = def.ID || name;
  if (def.Address === '0.0.0.0' || def.Address === '::' || def.Address === '[::]') throw badRequest('Invalid service address');
  validateWeights(def.Weights);
  const kind = def.Kind ?? '';
  if (kind !== '' && kind !== CONNECT_PROXY) throw badRequest(`Invalid service kind ${JSON.stringify(kind)}`);
  const proxy = def.Proxy ?? (def.ProxyDestination ? { DestinationServiceName: def.ProxyDestination } : undefined);
  if (kind === CONNECT_PROXY) {
    const problems: string[] = [];
    if (!proxy?.DestinationServiceName) problems.push('Proxy.DestinationServiceName must be non-empty for Connect proxy services');
    if (!def.Port) problems.push('Port must be set for a Connect proxy');
    if (def.Connect?.Native) problems.push('A Proxy cannot also be Connect Native, only typical services');
    if (problems.length > 0) throw badRequest(`Invalid service: ${problems.join('; ')}`);
  }
  const connect = def.Connect ?? undefined;
  if (connect?.Proxy && !policy.allowManagedApiRegistration) throw badRequest('Managed proxy registration via the API is disallowed.');
  if (connect?.Proxy && connect.SidecarService) throw badRequest('Invalid service: a service cannot have both a managed proxy and a sidecar service');

  const main: LocalService = {
    service: {
      ID: id,
      Service: name,
      Tags: def.Tags ?? [],
      Address: def.Address ?? '',
      Meta: def.Meta ?? {},
      Port: def.Port ?? 0,
      Weights: def.Weights ? { Passing: def.Weights.Passing ?? 1, Warning: def.Weights.Warning ?? 0 } : { Passing: 1, Warning: 1 },
      EnableTagOverride: def.EnableTagOverride ?? false,
      Kind: kind,
      Proxy: proxy ?? null,
      Connect: connect ? { Native: connect.Native ?? false, Proxy: connect.Proxy ? { ...connect.Proxy } : null } : null,
    },
    checks: checksOf(def, id, name),
  };
  const out = [main];
  const taken = new Set<number>();
  for (const s of others.values()) if (s.parentId !== id && s.service.ID !== id) taken.add(s.service.Port ?? 0);

  if (connect?.SidecarService) {
    const sc = connect.SidecarService;
    const scId = sc.ID || `${id}-sidecar-proxy`;
    const scDef: ServiceDefinition = {
      ...sc,
      ID: scId,
      Name: sc.Name || `${name}-sidecar-proxy`,
      Kind: CONNECT_PROXY,
      Port: sc.Port || freePort(rangeOf(policy.sidecarPorts, SIDECAR_PORTS), taken),
      Address: sc.Address ?? def.Address,
      Proxy: {
        ...(sc.Proxy ?? {}),
        DestinationServiceName: name,
        DestinationServiceID: id,
        LocalServiceAddress: sc.Proxy?.LocalServiceAddress || '127.0.0.1',
        LocalServicePort: sc.Proxy?.LocalServicePort || def.Port || 0,
      },
      Connect: null,
    };
    // Consul's defaults when the sidecar names no checks of its own (agent/sidecar_service.go): the
    // proxy's port is listening, and the service it fronts is healthy (an alias check).
    if (!sc.Check && !(sc.Checks && sc.Checks.length > 0)) {
      scDef.Checks = [
        { Name: 'Connect Sidecar Listening', TCP: `127.0.0.1:${scDef.Port}`, Interval: '10s' },
        { Name: `Connect Sidecar Aliasing ${id}`, AliasService: id },
      ];
    }
    const [sidecar] = servicesFromDefinition(scDef, others, policy);
    out.push({ ...sidecar!, parentId: id });
  }
  if (connect?.Proxy) {
    const mp = connect.Proxy;
    const execMode = mp.ExecMode || 'daemon';
    // "script" runs the command through /bin/sh -c under the same supervisor as "daemon".
    if (execMode !== 'daemon' && execMode !== 'script') {
      throw badRequest(`Managed proxy ExecMode ${JSON.stringify(execMode)} is not supported: "daemon" or "script"`);
    }
    // No Command: the agent runs its built-in proxy (connect/managed-proxies.ts), as Consul 1.4 does.
    const command = mp.Command ?? [];
    const proxyId = `${id}-proxy`;
    const existing = others.get(proxyId);
    const port = existing?.service.Port || freePort(rangeOf(policy.managedPorts, MANAGED_PORTS), taken);
    out.push({
      service: {
        ID: proxyId,
        Service: `${name}-proxy`,
        Tags: [],
        Address: '',
        Meta: {},
        Port: port,
        Weights: { Passing: 1, Warning: 1 },
        EnableTagOverride: false,
        Kind: CONNECT_PROXY,
        Proxy: { DestinationServiceName: name, DestinationServiceID: id, LocalServiceAddress: '127.0.0.1', LocalServicePort: def.Port ?? 0 },
        Connect: null,
      },
      checks: [],
      managed: {
        targetId: id,
        execMode,
        command: [...command],
        // Kept across re-registrations so a running proxy's token stays valid.
        token: existing?.managed?.token ?? randomUUID(),
        ...configAndUpstreams(mp.Config ?? {}, mp.Upstreams ?? []),
      },
      parentId: id,
    });
  }
  return out;
}

/**
 * A managed proxy's Config and Upstreams as Consul 1.4 keeps them: `Config.upstreams`, the form
 * before Upstreams existed, is moved into Upstreams when Upstreams is empty and removed from Config
 * in any case (Consul's ServiceDefinition.ConnectManagedProxy).
 */
function configAndUpstreams(config: Record<string, unknown>, upstreams: unknown[]): { config: Record<string, unknown>; upstreams: unknown[] } {
  const { upstreams: legacy, ...rest } = config;
  const moved = upstreams.length === 0 && Array.isArray(legacy) ? legacy.flatMap(legacyUpstream) : [];
  return { config: rest, upstreams: (upstreams.length > 0 ? upstreams : moved).map(managedUpstream) };
}

/** Consul's decoding of the legacy fields (mapstructure: strings stay strings, numbers truncate); what does not decode is skipped, as there. */
const LEGACY_UPSTREAM_FIELDS: Record<string, 'string' | 'number'> = {
  local_bind_address: 'string',
  local_bind_port: 'number',
  destination_name: 'string',
  destination_namespace: 'string',
  destination_type: 'string',
  destination_datacenter: 'string',
};

function legacyUpstream(raw: unknown): unknown[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return [];
  const r = raw as Record<string, unknown>;
  const unused: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) {
    const want = Object.hasOwn(LEGACY_UPSTREAM_FIELDS, k) ? LEGACY_UPSTREAM_FIELDS[k] : undefined;
    if (want === undefined) unused[k] = v;
    else if (v !== null && typeof v !== want) return [];
  }
  const str = (k: string) => (typeof r[k] === 'string' ? (r[k] as string) : '');
  const out: Record<string, unknown> = {
    DestinationType: str('destination_type') === 'prepared_query' ? 'prepared_query' : 'service',
    DestinationName: str('destination_name'),
    Datacenter: str('destination_datacenter'),
    LocalBindPort: typeof r.local_bind_port === 'number' ? Math.trunc(r.local_bind_port) : 0,
    // Anything else the old form carried goes into the upstream's own Config, as Consul keeps it.
    Config: Object.keys(unused).length > 0 ? unused : null,
  };
  if (str('destination_namespace')) out.DestinationNamespace = str('destination_namespace');
  if (str('local_bind_address')) out.LocalBindAddress = str('local_bind_address');
  return [out];
}

const UPSTREAM_DESTINATION_TYPES = new Set(['service', 'prepared_query']);

/** A managed proxy's upstream with Consul's default DestinationType ("service"); an unknown type is 400. */
function managedUpstream(u: unknown): unknown {
  if (typeof u !== 'object' || u === null || Array.isArray(u)) return u;
  const up = u as Record<string, unknown>;
  const type = up.DestinationType === undefined || up.DestinationType === null || up.DestinationType === '' ? 'service' : up.DestinationType;
  if (typeof type !== 'string' || !UPSTREAM_DESTINATION_TYPES.has(type)) {
    throw badRequest(`Invalid managed proxy upstream: unknown DestinationType ${JSON.stringify(type)}: "service" or "prepared_query"`);
  }
  return { ...up, DestinationType: type };
}

/** The catalog registration of one local service on this agent's node. */
export function registerRequestOf(s: LocalService, node: string): RegisterRequest {
  return {
    Node: node,
    SkipNodeUpdate: true,
    Service: s.service,
    Checks: s.checks.map((c) => catalogCheckOf(c, node, c.Status, '')),
  };
}

/** Consul's AgentService JSON (Kind, Proxy and Connect omitted when empty). */
export function agentServiceOut(s: LocalService, indexes?: { CreateIndex: number; ModifyIndex: number }): Record<string, unknown> {
  const v = s.service;
  const out: Record<string, unknown> = {};
  if (v.Kind) out.Kind = v.Kind;
  Object.assign(out, {
    ID: v.ID,
    Service: v.Service,
    Tags: v.Tags ?? [],
    Meta: v.Meta ?? {},
    Port: v.Port ?? 0,
    Address: v.Address ?? '',
    Weights: v.Weights,
    EnableTagOverride: v.EnableTagOverride ?? false,
    CreateIndex: indexes?.CreateIndex ?? 0,
    ModifyIndex: indexes?.ModifyIndex ?? 0,
  });
  if (v.Kind === CONNECT_PROXY && v.Proxy?.DestinationServiceName) out.ProxyDestination = v.Proxy.DestinationServiceName;
  if (v.Proxy && Object.keys(v.Proxy).length > 0) out.Proxy = v.Proxy;
  const c = v.Connect;
  if (c && (c.Native || c.Proxy)) out.Connect = { ...(c.Native ? { Native: true } : {}), ...(c.Proxy ? { Proxy: c.Proxy } : {}) };
  return out;
}

export function contentHash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

/** The managed proxy configuration object of the spec (without ContentHash). */
export function proxyConfigOf(proxy: LocalService, target: LocalService, bindAddress: string): Record<string, unknown> {
  const m = proxy.managed!;
  return {
    ProxyServiceID: proxy.service.ID,
    TargetServiceID: target.service.ID,
    TargetServiceName: target.service.Service,
    ExecMode: m.execMode,
    Command: m.command,
    Config: {
      bind_address: bindAddress,
      bind_port: proxy.service.Port,
      local_service_address: `127.0.0.1:${target.service.Port ?? 0}`,
      ...m.config,
    },
    Upstreams: m.upstreams,
  };
}
