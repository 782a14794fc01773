// What each watch type asks of the agent's own HTTP API and how the answer becomes the value given
// to the handler (Consul 1.4's watch/funcs.go, through its api client): a key's one entry or null,
// a prefix's entries or null, the catalog and health lists as answered, and for `event` only the
// events after the last one already handed over. Pure.
import type { WatchDefinition } from './watch-definition';

export interface WatchQuery {
  path: string;
  /** Query parameters besides index and wait (which the plan adds). */
  query: Array<[string, string]>;
  /** A 404 is an answer (KV: no such key), not a failure. */
  notFoundIsEmpty: boolean;
}

const kvPath = (key: string) => `/v1/kv/${key.split('/').map(encodeURIComponent).join('/')}`;

export function watchQuery(w: WatchDefinition): WatchQuery {
  const query: Array<[string, string]> = [];
  if (w.datacenter) query.push(['dc', w.datacenter]);
  if (w.stale) query.push(['stale', '']);
  const q = (path: string, extra: Array<[string, string]> = [], notFoundIsEmpty = false): WatchQuery => ({ path, query: [...query, ...extra], notFoundIsEmpty });
  switch (w.type) {
    case 'key':
      return q(kvPath(w.key!), [], true);
    case 'keyprefix':
      return q(kvPath(w.prefix!), [['recurse', '']], true);
    case 'services':
      return q('/v1/catalog/services');
    case 'nodes':
      return q('/v1/catalog/nodes');
    case 'service':
      return q(`/v1/health/service/${encodeURIComponent(w.service!)}`, [...(w.tag ? [['tag', w.tag] as [string, string]] : []), ...(w.passingonly ? [['passing', '1'] as [string, string]] : [])]);
    case 'checks':
      return w.service ? q(`/v1/health/checks/${encodeURIComponent(w.service)}`) : q(`/v1/health/state/${encodeURIComponent(w.state ?? 'any')}`);
    case 'event':
      return q('/v1/event/list', w.name ? [['name', w.name]] : []);
  }
}

interface EventLike {
  ID?: unknown;
}

/**
 * The value a watch hands over for one answer. `lastEventId` is the newest event already handed
 * over: Consul prunes the list to the events after it (it finds it by the index it derives from
 * event IDs; here the index is a Raft index, so the ID itself is remembered).
 */
export function watchValue(w: WatchDefinition, status: number, body: unknown, lastEventId: string | undefined): unknown {
  if (status === 404) return null;
  switch (w.type) {
    case 'key':
      return Array.isArray(body) ? (body[0] ?? null) : null;
    case 'event': {
      if (!Array.isArray(body) || lastEventId === undefined) return body;
      const at = (body as EventLike[]).findIndex((e) => e?.ID === lastEventId);
      return at < 0 ? body : body.slice(at + 1);
    }
    default:
      return body;
  }
}

/** The ID of the newest event in an event list answer, to prune the next one by. */
export function newestEventId(body: unknown): string | undefined {
  if (!Array.isArray(body) || body.length === 0) return undefined;
  const id = (body[body.length - 1] as EventLike)?.ID;
  return typeof id === 'string' ? id : undefined;
}
