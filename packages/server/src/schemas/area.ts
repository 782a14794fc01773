// Request bodies of the network-area endpoints (spec "Network area").
import type { SchemaNode } from './canonical-keys';

const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;

export interface AreaBody {
  PeerDatacenter?: string;
  RetryJoin?: string[] | null;
  UseTLS?: boolean;
}

export const areaSchema: SchemaNode = {
  type: 'object',
  properties: {
    PeerDatacenter: str,
    RetryJoin: { type: ['array', 'null'], items: str },
    UseTLS: bool,
  },
};

export interface AreaUpdateBody {
  UseTLS?: boolean;
}

export const areaUpdateSchema: SchemaNode = { type: 'object', properties: { UseTLS: bool } };

/** `PUT /v1/operator/area/:uuid/join`: a JSON array of addresses. */
export const areaJoinSchema: SchemaNode = { type: 'array', items: str };
