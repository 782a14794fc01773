// Request bodies of the ACL token and policy endpoints (spec "ACL token", "ACL policy").
// Server-set fields (Hash, CreateTime, indexes) are accepted and ignored, as Consul's decoder does.
import { Type, type Static } from '@sinclair/typebox';
import { NullableList, Obj, OneOf } from './body-fields';

const strOrNull = () => OneOf<string | null>('string', 'null');
const bool = () => OneOf<boolean | null>('boolean', 'null');

export const policyLinkSchema = Obj({ ID: strOrNull(), Name: strOrNull() });

export const tokenSchema = Obj({
  AccessorID: strOrNull(),
  SecretID: strOrNull(),
  Description: strOrNull(),
  Policies: NullableList(policyLinkSchema),
  Local: bool(),
  // Legacy fields: refused when set.
  Rules: strOrNull(),
  Type: strOrNull(),
});
export type TokenBody = Static<typeof tokenSchema>;

export const cloneSchema = Obj({ Description: strOrNull() });
export type CloneBody = Static<typeof cloneSchema>;

export const policySchema = Obj({
  ID: strOrNull(),
  Name: strOrNull(),
  Description: strOrNull(),
  Rules: strOrNull(),
  Datacenters: NullableList(Type.String()),
});
export type PolicyBody = Static<typeof policySchema>;

/** The legacy API's token (Consul's structs.ACL): `ID` is the secret. */
export const legacyAclSchema = Obj({ ID: strOrNull(), Name: strOrNull(), Type: strOrNull(), Rules: strOrNull() });
export type LegacyAclBody = Static<typeof legacyAclSchema>;
