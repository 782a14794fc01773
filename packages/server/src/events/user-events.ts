// User events at the edges: what a fire request must satisfy before it is replicated, and which
// events this agent delivers (Consul's agent shouldProcessUserEvent), applied when the list is
// read since every server holds the whole ring (docs/events.md).
import { randomUUID } from 'node:crypto';
import type { EventInput, EventOut } from '@registry/store';
import { badRequest } from '../errors';
import { compileUserRegexp, storedUserRegexp, UserRegexpError } from '../regexp/user-regexp';

/** Name and payload together at most this many bytes (serf's default UserEventSizeLimit). */
export const USER_EVENT_SIZE_LIMIT = 512;

export interface FireRequest {
  name: string;
  payload: Buffer | undefined;
  node: string;
  service: string;
  tag: string;
}

/** The event to replicate, or a 400 with Consul's reason. */
export function eventToFire(r: FireRequest): EventInput {
  if (!r.name) throw badRequest('User event missing name');
  if (r.tag && !r.service) throw badRequest('cannot provide tag filter without service filter');
  for (const [what, re] of [['node', r.node], ['service', r.service], ['tag', r.tag]] as const) {
    if (re) checkFilter(re, what);
  }
  const size = Buffer.byteLength(r.name) + (r.payload?.length ?? 0);
  if (size > USER_EVENT_SIZE_LIMIT) throw badRequest(`user event exceeds configured limit of ${USER_EVENT_SIZE_LIMIT} bytes before encoding`);
  return {
    ID: randomUUID(),
    Name: r.name,
    Payload: r.payload && r.payload.length > 0 ? r.payload.toString('base64') : null,
    NodeFilter: r.node,
    ServiceFilter: r.service,
    TagFilter: r.tag,
  };
}

/** A local service as the filters see it. */
export interface LocalServiceFacts {
  ID: string;
  Service: string;
  Tags: readonly string[];
}

/**
 * Whether this agent (node `node`, running `services`) takes `e`: the node filter must match its
 * name; the service filter one of its services (by ID, as Consul's map key, or by name), and the
 * tag filter one tag of that same service.
 */
export function deliveredHere(e: EventOut, node: string, services: readonly LocalServiceFacts[]): boolean {
  if (e.Version > 1) return false;
  // Filters are RE2 (regexp/user-regexp.ts): linear in the name, whatever an event's sender wrote.
  const nodeRe = e.NodeFilter ? storedUserRegexp(e.NodeFilter) : undefined;
  if (nodeRe === null || (nodeRe && !nodeRe.test(node))) return false;
  if (!e.ServiceFilter) return true;
  const serviceRe = storedUserRegexp(e.ServiceFilter);
  const tagRe = e.TagFilter ? storedUserRegexp(e.TagFilter) : undefined;
  if (serviceRe === null || tagRe === null) return false;
  return services.some((s) => (serviceRe.test(s.ID) || serviceRe.test(s.Service)) && (!tagRe || s.Tags.some((t) => tagRe.test(t))));
}

/** A fire whose filter is not valid RE2 is refused (400) before it is replicated. */
function checkFilter(source: string, what: string): void {
  try {
    compileUserRegexp(source);
  } catch (err) {
    if (err instanceof UserRegexpError) throw badRequest(`Invalid ${what} filter: ${err.message}`);
    throw err;
  }
}
