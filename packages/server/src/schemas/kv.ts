// The body of /v1/txn: an array of operations, each `{"KV": {Verb, Key, Value (base64), Flags,
// Index, Session}}` (keys case-insensitive, as Consul decodes them).
import type { SchemaNode } from './canonical-keys';

export interface TxnOpBody {
  KV?: {
    Verb?: string;
    Key?: string;
    Value?: string | null;
    Flags?: number;
    Index?: number;
    Session?: string;
  } | null;
}

export const txnSchema: SchemaNode = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      KV: {
        type: ['object', 'null'],
        properties: {
          Verb: { type: 'string' },
          Key: { type: 'string' },
          Value: { type: ['string', 'null'] },
          Flags: { type: 'integer', minimum: 0 },
          Index: { type: 'integer', minimum: 0 },
          Session: { type: 'string' },
        },
      },
    },
  },
};
