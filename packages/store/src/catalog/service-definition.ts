// Turning a registration's Service object into a stored row: Consul's defaults (ID from name,
// default weights, the deprecated ProxyDestination) and its stateless validation, in Consul's order.
import { Rejection } from '../command-error';
import { bool, int, optList, optNumber, optObject, str, strList, strMap, type PlainObject } from '../input-fields';
import { clonePlain } from '../plain-data';
import type { ConnectOut, ProxyOut, Weights } from './outputs';
import type { ServiceData } from './records';

export const CONNECT_PROXY = 'connect-proxy';
const PATH = 'Service';
const DEFAULT_WEIGHTS: Weights = { Passing: 1, Warning: 1 };
const MAX_WEIGHT = 65535;
const UNSPECIFIED_ADDRESSES = new Set(['0.0.0.0', '::', '[::]']);

/** Catalog registration silently replaces out-of-range weights by the default (the agent API refuses them). */
function weights(o: PlainObject): Weights {
  const w = optObject(o.Weights, `${PATH}.Weights`);
  if (!w) return { ...DEFAULT_WEIGHTS };
  const passing = optNumber(w, 'Passing', `${PATH}.Weights`) ?? 0;
  const warning = optNumber(w, 'Warning', `${PATH}.Weights`) ?? 0;
  const ok =
    Number.isInteger(passing) && Number.isInteger(warning) && passing >= 1 && passing <= MAX_WEIGHT && warning >= 0 && warning <= MAX_WEIGHT;
  return ok ? { Passing: passing, Warning: warning } : { ...DEFAULT_WEIGHTS };
}

function proxy(o: PlainObject, kind: string): ProxyOut {
  const path = `${PATH}.Proxy`;
  const p = optObject(o.Proxy, path) ?? {};
  const out: ProxyOut = {};
  const legacy = kind === CONNECT_PROXY ? str(o, 'ProxyDestination', PATH) : '';
  const destination = str(p, 'DestinationServiceName', path) || legacy;
  if (destination) out.DestinationServiceName = destination;
  const destinationId = str(p, 'DestinationServiceID', path);
  if (destinationId) out.DestinationServiceID = destinationId;
  const localAddress = str(p, 'LocalServiceAddress', path);
  if (localAddress) out.LocalServiceAddress = localAddress;
  const localPort = int(p, 'LocalServicePort', path);
  if (localPort) out.LocalServicePort = localPort;
  const config = optObject(p.Config, `${path}.Config`);
  if (config && Object.keys(config).length > 0) out.Config = clonePlain(config);
  const upstreams = optList(p, 'Upstreams', path);
  if (upstreams && upstreams.length > 0) out.Upstreams = clonePlain(upstreams);
  return out;
}

function connect(o: PlainObject): ConnectOut {
  const path = `${PATH}.Connect`;
  const c = optObject(o.Connect, path) ?? {};
  const out: ConnectOut = {};
  if (bool(c, 'Native', path)) out.Native = true;
  const managed = optObject(c.Proxy, `${path}.Proxy`);
  if (managed) out.Proxy = clonePlain(managed);
  const sidecar = optObject(c.SidecarService, `${path}.SidecarService`);
  if (sidecar) out.SidecarService = clonePlain(sidecar);
  return out;
}

/** Consul's NodeService.Validate: every problem at once, as a multi-error. */
function connectProblems(s: Pick<ServiceData, 'Kind' | 'Port' | 'Proxy' | 'Connect'>): string[] {
  const problems: string[] = [];
  if (s.Kind === CONNECT_PROXY) {
    if ((s.Proxy.DestinationServiceName ?? '').trim() === '') {
      problems.push('Proxy.DestinationServiceName must be non-empty for Connect proxy services');
    }
    if (s.Port === 0) problems.push('Port must be set for a Connect proxy');
    if (s.Connect.Native) problems.push('A Proxy cannot also be Connect Native, only typical services');
  }
  const sidecar = s.Connect.SidecarService;
  if (sidecar) {
    if (typeof sidecar.ID === 'string' && sidecar.ID !== '') {
      problems.push('A SidecarService cannot specify an ID as this is managed by the agent');
    }
    const nested = sidecar.Connect;
    if (typeof nested === 'object' && nested !== null) {
      const n = nested as PlainObject;
      if (n.SidecarService !== undefined && n.SidecarService !== null) problems.push('A SidecarService cannot have a nested SidecarService');
      if (n.Proxy !== undefined && n.Proxy !== null) problems.push('A SidecarService cannot have a managed proxy');
    }
  }
  return problems;
}

/**
 * The stored form of a registration's service on node `nodeKey` (folded). Throws a Rejection with
 * Consul's message when the service is unacceptable; metadata is checked separately (Consul checks it
 * later, when inserting, so a bad node name is reported first).
 */
export function normalizeService(o: PlainObject, nodeKey: string): ServiceData {
  const name = str(o, 'Service', PATH);
  const id = str(o, 'ID', PATH) || name;
  if (id !== '' && name === '') throw new Rejection('Must provide service name with ID');
  if (id === '') throw new Rejection('Must provide service name');
  const address = str(o, 'Address', PATH);
  if (UNSPECIFIED_ADDRESSES.has(address)) throw new Rejection('Invalid service address');
  const kind = str(o, 'Kind', PATH);
  const service: ServiceData = {
    nodeKey,
    Kind: kind,
    ID: id,
    Service: name,
    Tags: strList(o, 'Tags', PATH),
    Address: address,
    Meta: strMap(o, 'Meta', PATH) ?? {},
    Port: int(o, 'Port', PATH),
    Weights: weights(o),
    EnableTagOverride: bool(o, 'EnableTagOverride', PATH),
    Proxy: proxy(o, kind),
    Connect: connect(o),
  };
  const problems = connectProblems(service);
  if (problems.length > 0) {
    const count = problems.length === 1 ? '1 error occurred' : `${problems.length} errors occurred`;
    throw new Rejection(`${count}: ${problems.join('; ')}`);
  }
  return service;
}
