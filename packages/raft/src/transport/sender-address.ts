// How a server names itself on the wire, and what a receiver may believe of it. A server listens
// on its bind address (often 0.0.0.0 in a container) but must be named by the address others reach
// it by (its advertised address): a frame that carried `0.0.0.0:8300` made a new server record the
// leader as itself (issue #25, finding 1).
import { isIP } from 'node:net';

/** Splits `host:port` / `[v6]:port`; the host without brackets. */
export function splitHostPort(address: string): { host: string; port: string } | null {
  const bracket = /^\[([^\]]+)\]:(\d+)$/.exec(address);
  if (bracket) return { host: bracket[1], port: bracket[2] };
  const i = address.lastIndexOf(':');
  if (i <= 0 || address.indexOf(':') !== i) return null;
  const port = address.slice(i + 1);
  return /^\d+$/.test(port) ? { host: address.slice(0, i), port } : null;
}

export function joinHostPort(host: string, port: string | number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** 0.0.0.0 or :: — an address to listen on, never one to dial. */
export function isUnspecifiedHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '0:0:0:0:0:0:0:0' || host === '';
}

export function isLoopbackHost(host: string): boolean {
  const h = host.startsWith('::ffff:') ? host.slice(7) : host;
  return h === 'localhost' || h === '::1' || (isIP(h) === 4 && h.startsWith('127.'));
}

/** Who sent a request, as the connection it came on says (absent on an in-memory network). */
export interface Caller {
  /** The connection's source address (an IPv4-mapped IPv6 address is given as IPv4). */
  remoteHost?: string;
}

function plainRemote(remoteHost: string | undefined): string | undefined {
  return remoteHost?.startsWith('::ffff:') ? remoteHost.slice(7) : remoteHost;
}

/**
 * The host to record for a sender that names itself `claimed`, having come on a connection from
 * `remoteHost`. A claim of a wildcard address, or of loopback over a connection from another
 * host, cannot be dialled back: the connection's source address is used instead (what
 * hashicorp/raft falls back to for peers that send no advertised address). Anything else is the
 * sender's own word (a host name, or an address NATed on the way, is not second-guessed).
 */
export function reachableHost(claimed: string, remoteHost: string | undefined): string {
  const remote = plainRemote(remoteHost);
  const unusable = isUnspecifiedHost(claimed) || (isLoopbackHost(claimed) && remote !== undefined && !isLoopbackHost(remote));
  return unusable && remote ? remote : claimed;
}

/** As reachableHost, for a `host:port` address; undefined when nothing dialable can be made of it. */
export function senderAddress(claimed: string | undefined, remoteHost: string | undefined): string | undefined {
  if (!claimed) return undefined;
  const parts = splitHostPort(claimed);
  if (!parts) return claimed; // not host:port (an in-memory network's names): nothing to judge
  const host = reachableHost(parts.host, remoteHost);
  if (isUnspecifiedHost(host)) return undefined;
  return host === parts.host ? claimed : joinHostPort(host, parts.port);
}
