// `PUT /v1/coordinate/update` (Consul's CoordinateUpdateRequest).
import type { SchemaNode } from './canonical-keys';

const num = { type: 'number' } as const;

export interface CoordinateBody {
  Node?: string;
  Segment?: string;
  Coord?: { Vec?: number[]; Error?: number; Adjustment?: number; Height?: number } | null;
}

export const coordinateUpdateSchema: SchemaNode = {
  type: 'object',
  properties: {
    Node: { type: 'string' },
    Segment: { type: 'string' },
    Coord: {
      type: ['object', 'null'],
      properties: { Vec: { type: 'array', items: num }, Error: num, Adjustment: num, Height: num },
    },
  },
};
