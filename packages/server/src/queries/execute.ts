// Executing a prepared query locally (consul-behaviour §4.5): which instances pass, in which order.
// Pure functions over health-service results, so they are tested without a server.
import type { CheckServiceNodeOut, PreparedServiceQuery } from '@registry/store';

/** Health (critical never passes; OnlyPassing also drops warning), then node meta, service meta and tags. */
export function filterNodes(q: PreparedServiceQuery, nodes: readonly CheckServiceNodeOut[]): CheckServiceNodeOut[] {
  const ignored = new Set(q.IgnoreCheckIDs ?? []);
  const wanted: string[] = [];
  const unwanted: string[] = [];
  for (const t of q.Tags ?? []) {
    if (t.startsWith('!')) unwanted.push(t.slice(1).toLowerCase());
    else wanted.push(t.toLowerCase());
  }
  return nodes.filter((n) => {
    for (const c of n.Checks) {
      if (ignored.has(c.CheckID)) continue;
      if (c.Status === 'critical') return false;
      if (q.OnlyPassing && c.Status !== 'passing') return false;
    }
    for (const [k, v] of Object.entries(q.NodeMeta ?? {})) if (n.Node.Meta?.[k] !== v) return false;
    for (const [k, v] of Object.entries(q.ServiceMeta ?? {})) if (n.Service.Meta?.[k] !== v) return false;
    const tags = new Set((n.Service.Tags ?? []).map((t) => t.toLowerCase()));
    return wanted.every((t) => tags.has(t)) && !unwanted.some((t) => tags.has(t));
  });
}

/** A fresh random order (Fisher–Yates). */
export function shuffle<T>(items: readonly T[], random: () => number = Math.random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Sort by round-trip time from node `source` (stable: the shuffle decides among equals and among
 * nodes without coordinates); then, if the source itself is among the first ten, it goes first.
 */
export function orderNear(
  items: readonly CheckServiceNodeOut[],
  source: string,
  sortByDistance: (from: string, items: readonly CheckServiceNodeOut[]) => CheckServiceNodeOut[],
): CheckServiceNodeOut[] {
  const sorted = sortByDistance(source, items);
  const at = sorted.slice(0, 10).findIndex((n) => n.Node.Node.toLowerCase() === source.toLowerCase());
  if (at > 0) [sorted[0], sorted[at]] = [sorted[at], sorted[0]];
  return sorted;
}

/** The source IP of a request: the first X-Forwarded-For entry, else the peer address (IPv4-mapped unwrapped). */
export function sourceIp(forwardedFor: string | string[] | undefined, remoteAddress: string | undefined): string {
  const header = Array.isArray(forwardedFor) ? forwardedFor[0] : forwardedFor;
  const first = header?.split(',')[0]?.trim();
  const ip = first || remoteAddress || '';
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}
