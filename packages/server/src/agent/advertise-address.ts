// The address other agents reach this one by (Consul's advertise_addr). Without -advertise it is
// the bind address, unless that is a wildcard (0.0.0.0, ::), which no other host can dial: then,
// as Consul, the host's one private IPv4 address, and a start-up error naming the candidates when
// there are several or none (issue #25: a server bound to 0.0.0.0 used to advertise 127.0.0.1).
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { isUnspecifiedHost } from '@registry/raft';
import { ConfigError } from '../config/config-sources';

/** RFC 1918 and RFC 6598 (carrier-grade NAT) ranges: what go-sockaddr's GetPrivateIP calls private. */
function isPrivateIPv4(ip: string): boolean {
  const [a, b] = ip.split('.').map(Number);
  return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
}

/** The private IPv4 addresses of this host's interfaces (loopback excluded), each once. */
export function privateIPv4Addresses(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): string[] {
  const found = new Set<string>();
  for (const list of Object.values(interfaces)) {
    for (const info of list ?? []) {
      if (info.family === 'IPv4' && !info.internal && isPrivateIPv4(info.address)) found.add(info.address);
    }
  }
  return [...found];
}

/** The host (IP or host name, no port) this agent advertises, or a ConfigError saying what to set. */
export function advertiseHost(config: { bind: string; advertise: string | undefined }, interfaces?: NodeJS.Dict<NetworkInterfaceInfo[]>): string {
  if (config.advertise !== undefined) {
    if (isUnspecifiedHost(config.advertise.replace(/^\[|\]$/g, ''))) {
      throw new ConfigError([`-advertise ${config.advertise} is not an address others can reach: give this host's address or name`]);
    }
    if (/^[^:[\]]+:\d+$/.test(config.advertise) || /^\[.*\]:\d+$/.test(config.advertise)) {
      throw new ConfigError([`-advertise ${config.advertise}: give the address without a port (the port is -server-port)`]);
    }
    return config.advertise;
  }
  if (!isUnspecifiedHost(config.bind.replace(/^\[|\]$/g, ''))) return config.bind;
  const candidates = privateIPv4Addresses(interfaces);
  if (candidates.length === 1) return candidates[0];
  if (candidates.length === 0) {
    throw new ConfigError([`-bind ${config.bind} without -advertise: no private IPv4 address found on this host to advertise; set -advertise to the address other agents reach this one by`]);
  }
  throw new ConfigError([`-bind ${config.bind} without -advertise: multiple private IPv4 addresses found (${candidates.join(', ')}); set -advertise (or -bind) to the one other agents reach this one by`]);
}
