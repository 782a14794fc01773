// The address of PUT /v1/agent/join/:address: `IP`, `IP:port`, `[IPv6]:port`, `hostname` or
// `hostname:port` (the server port, 8300, when none is given). Anything else is a 400 at once,
// rather than a dial that fails later with a 500.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { joinAddress } from '../areas/join-address';
import { badRequest } from '../errors';

/** RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, 253 characters at most. */
const LABEL = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;

function validHost(host: string): boolean {
  if (isIP(host)) return true;
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  // All-numeric dotted names are IPv4 addresses or nothing (`999.1.1.1`, `10.1`).
  if (labels.every((l) => /^\d+$/.test(l))) return false;
  return labels.every((l) => LABEL.test(l));
}

/** The dialable `host:port`; throws a 400 naming the problem. */
export function joinTarget(text: string): string {
  const parsed = joinAddress(text);
  const host = parsed instanceof Error ? undefined : parsed.slice(0, parsed.lastIndexOf(':')).replace(/^\[(.*)\]$/, '$1');
  if (parsed instanceof Error || host === undefined || !validHost(host)) {
    throw badRequest(`Invalid join address ${JSON.stringify(text)}: expected IP, IP:port, hostname or hostname:port`);
  }
  return parsed;
}

/** Resolver answers that mean the name does not exist (as opposed to a resolver that could not be asked). */
const NO_SUCH_HOST = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME']);

/**
 * joinTarget, and a host name that does not exist is also the caller's mistake: a 400 naming it,
 * rather than a dial that fails later with a 500 (issue 33 finding 10). A resolver that cannot be
 * reached says nothing about the name: the join goes ahead and fails (or not) on its own.
 */
export async function resolvedJoinTarget(text: string): Promise<string> {
  const target = joinTarget(text);
  const host = target.slice(0, target.lastIndexOf(':')).replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) return target;
  try {
    await lookup(host);
  } catch (err) {
    if (NO_SUCH_HOST.has((err as NodeJS.ErrnoException).code ?? '')) throw badRequest(`Invalid join address ${JSON.stringify(text)}: no such host ${JSON.stringify(host)}`);
  }
  return target;
}
