// The body of POST /v1/query and PUT /v1/query/:id (spec "Prepared query"; consul-behaviour §4.1).
import type { SchemaNode } from './canonical-keys';

const str = { type: ['string', 'null'] } as const;
const strList = { type: ['array', 'null'], items: { type: 'string' } } as const;
const strMap = { type: ['object', 'null'], additionalProperties: { type: 'string' } } as const;

export interface QueryBody {
  ID?: string | null;
  Name?: string | null;
  Session?: string | null;
  Token?: string | null;
  Template?: { Type?: string | null; Regexp?: string | null; RemoveEmptyTags?: boolean | null } | null;
  Service?: {
    Service?: string | null;
    Failover?: { NearestN?: number | null; Datacenters?: string[] | null } | null;
    OnlyPassing?: boolean | null;
    IgnoreCheckIDs?: string[] | null;
    Near?: string | null;
    Tags?: string[] | null;
    NodeMeta?: Record<string, string> | null;
    ServiceMeta?: Record<string, string> | null;
    Meta?: Record<string, string> | null;
    Connect?: boolean | null;
  } | null;
  DNS?: { TTL?: string | null } | null;
}

export const querySchema: SchemaNode = {
  type: 'object',
  properties: {
    ID: str,
    Name: str,
    Session: str,
    Token: str,
    Template: {
      type: ['object', 'null'],
      properties: { Type: str, Regexp: str, RemoveEmptyTags: { type: ['boolean', 'null'] } },
    },
    Service: {
      type: ['object', 'null'],
      properties: {
        Service: str,
        Failover: {
          type: ['object', 'null'],
          properties: { NearestN: { type: ['integer', 'null'] }, Datacenters: strList },
        },
        OnlyPassing: { type: ['boolean', 'null'] },
        IgnoreCheckIDs: strList,
        Near: str,
        Tags: strList,
        NodeMeta: strMap,
        ServiceMeta: strMap,
        Meta: strMap,
        Connect: { type: ['boolean', 'null'] },
      },
    },
    DNS: { type: ['object', 'null'], properties: { TTL: str } },
  },
};
