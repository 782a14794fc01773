// Request bodies of the ACL token and policy endpoints (spec "ACL token", "ACL policy").
// Server-set fields (Hash, CreateTime, indexes) are accepted and ignored, as Consul's decoder does.
import type { SchemaNode } from './canonical-keys';

const str = { type: 'string' } as const;
const strOrNull = { type: ['string', 'null'] } as const;
const bool = { type: ['boolean', 'null'] } as const;

export const policyLinkSchema: SchemaNode = {
  type: 'object',
  properties: { ID: strOrNull, Name: strOrNull },
};

export const tokenSchema: SchemaNode = {
  type: 'object',
  properties: {
    AccessorID: strOrNull,
    SecretID: strOrNull,
    Description: strOrNull,
    Policies: { type: ['array', 'null'], items: policyLinkSchema },
    Local: bool,
    // Legacy fields: refused when set.
    Rules: strOrNull,
    Type: strOrNull,
  },
};

export const cloneSchema: SchemaNode = {
  type: 'object',
  properties: { Description: strOrNull },
};

export const policySchema: SchemaNode = {
  type: 'object',
  properties: {
    ID: strOrNull,
    Name: strOrNull,
    Description: strOrNull,
    Rules: strOrNull,
    Datacenters: { type: ['array', 'null'], items: str },
  },
};

/** The legacy API's token (Consul's structs.ACL): `ID` is the secret. */
export const legacyAclSchema: SchemaNode = {
  type: 'object',
  properties: { ID: strOrNull, Name: strOrNull, Type: strOrNull, Rules: strOrNull },
};
