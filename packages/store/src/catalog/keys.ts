// Names of nodes, services, service IDs and check IDs compare case-insensitively (Consul's memdb
// indexes are lower-cased), and so do the watch keys built from them.
import type { ServiceData } from './records';

export function fold(name: string): string {
  return name.toLowerCase();
}

/** Table-wide watch keys: every change to that table bumps them. */
export const NODES = 'nodes';
export const SERVICES = 'services';
export const CHECKS = 'checks';
export const COORDINATES = 'coordinates';

export const NODE_PREFIX = 'node:';
export const SERVICE_PREFIX = 'service:';
export const CONNECT_PREFIX = 'connect:';

/** Watch key of everything shown for one node (catalog/node, health/node). */
export function nodeWatchKey(name: string): string {
  return NODE_PREFIX + fold(name);
}

/** Watch key of every instance of a service name, with its node and checks. */
export function serviceWatchKey(name: string): string {
  return SERVICE_PREFIX + fold(name);
}

/** Watch key of the Connect-capable instances for a service name (its proxies and native instances). */
export function connectWatchKey(name: string): string {
  return CONNECT_PREFIX + fold(name);
}

/** The folded service name a connect lookup for this instance is filed under, if any. */
export function connectTargets(s: Pick<ServiceData, 'Kind' | 'Service' | 'Proxy' | 'Connect'>): string[] {
  const targets: string[] = [];
  if (s.Kind === 'connect-proxy' && s.Proxy.DestinationServiceName) targets.push(fold(s.Proxy.DestinationServiceName));
  if (s.Connect.Native) targets.push(fold(s.Service));
  return targets;
}

/** Every watch key whose results show this service instance. */
export function instanceKeys(s: Pick<ServiceData, 'Kind' | 'Service' | 'Proxy' | 'Connect'>): string[] {
  return [serviceWatchKey(s.Service), ...connectTargets(s).map((t) => CONNECT_PREFIX + t)];
}

/** The table key whose index stands in for a per-entity key once that entity is gone (or never was). */
export function catalogFallbackKey(key: string): string | undefined {
  if (key.startsWith(NODE_PREFIX)) return NODES;
  if (key.startsWith(SERVICE_PREFIX) || key.startsWith(CONNECT_PREFIX)) return SERVICES;
  return undefined;
}
