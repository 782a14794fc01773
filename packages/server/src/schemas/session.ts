// The body of PUT /v1/session/create (spec "Session"; consul-behaviour §3.1). LockDelay may be a
// number (seconds below 1000, else nanoseconds) or a duration string; the route interprets it.
import type { SchemaNode } from './canonical-keys';

export interface SessionCreateBody {
  Name?: string;
  Node?: string;
  Checks?: string[] | null;
  LockDelay?: number | string;
  Behavior?: string;
  TTL?: string;
}

export const sessionCreateSchema: SchemaNode = {
  type: 'object',
  properties: {
    Name: { type: ['string', 'null'] },
    Node: { type: ['string', 'null'] },
    Checks: { type: ['array', 'null'], items: { type: 'string' } },
    LockDelay: { type: ['number', 'string', 'null'] },
    Behavior: { type: ['string', 'null'] },
    TTL: { type: ['string', 'null'] },
  },
};
