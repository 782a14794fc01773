// The body of /v1/txn: an array of operations, each with exactly one of `KV` ({Verb, Key, Value
// (base64), Flags, Index, Session}), `Node` ({Verb, Node}), `Service` ({Verb, Node, Service}) or
// `Check` ({Verb, Check}) — Consul 1.4's TxnOp, keys case-insensitive as Consul decodes them.
// Flags is a Go uint64: the body is parsed with exact integers (http/json-text.ts), so a value
// beyond 2^53 arrives as a BigInt, which JSON Schema cannot type; BODY_CHECK checks its range.
import { asUint64 } from '@registry/store';
import type { SchemaNode } from './canonical-keys';
import { checkSchema, serviceSchema } from './catalog';
import { BODY_CHECK, type CheckedSchema } from './validator';

const str = { type: 'string' } as const;
const int = { type: 'integer', minimum: 0 } as const;
const strMap = { type: ['object', 'null'], additionalProperties: { type: 'string' } } as const;

export interface TxnKvBody {
  Verb?: string;
  Key?: string;
  Value?: string | null;
  Flags?: number | bigint;
  Index?: number;
  Session?: string;
}

export interface TxnOpBody {
  KV?: TxnKvBody | null;
  Node?: { Verb?: string; Node?: Record<string, unknown> | null } | null;
  Service?: { Verb?: string; Node?: string; Service?: Record<string, unknown> | null } | null;
  Check?: { Verb?: string; Check?: Record<string, unknown> | null } | null;
}

const withModifyIndex = (s: SchemaNode): SchemaNode => ({ ...s, type: ['object', 'null'], properties: { ...s.properties, ModifyIndex: int } });

export const txnSchema: CheckedSchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      KV: {
        type: ['object', 'null'],
        properties: {
          Verb: str,
          Key: str,
          Value: { type: ['string', 'null'] },
          // An integer or a BigInt: range-checked by BODY_CHECK.
          Flags: {},
          Index: int,
          Session: str,
        },
      },
      Node: {
        type: ['object', 'null'],
        properties: {
          Verb: str,
          Node: {
            type: ['object', 'null'],
            properties: { ID: str, Node: str, Address: str, Datacenter: str, TaggedAddresses: strMap, Meta: strMap, ModifyIndex: int },
          },
        },
      },
      Service: {
        type: ['object', 'null'],
        properties: { Verb: str, Node: str, Service: withModifyIndex(serviceSchema) },
      },
      Check: {
        type: ['object', 'null'],
        properties: { Verb: str, Check: withModifyIndex(checkSchema) },
      },
    },
  },
  [BODY_CHECK]: (ops: TxnOpBody[]) => {
    for (const [i, op] of ops.entries()) {
      const flags = op.KV?.Flags;
      if (flags !== undefined && flags !== null && asUint64(flags) === undefined) {
        return `Request decode failed: operation ${i}: Flags must be an integer from 0 to 18446744073709551615`;
      }
    }
    return undefined;
  },
};
