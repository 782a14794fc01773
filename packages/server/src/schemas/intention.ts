// Request body of intention create/update (spec "Intention"; consul-behaviour §6). Server-set
// fields (Precedence, CreatedAt, indexes) are dropped if a client sends them.
import type { SchemaNode } from './canonical-keys';

const str = { type: 'string' } as const;

export const intentionSchema: SchemaNode = {
  type: 'object',
  properties: {
    ID: str,
    Description: str,
    SourceNS: str,
    SourceName: str,
    DestinationNS: str,
    DestinationName: str,
    SourceType: str,
    Action: str,
    DefaultAddr: str,
    DefaultPort: { type: 'integer' },
    Meta: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
  },
  additionalProperties: false,
};
