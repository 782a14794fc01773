// The ACL commands. Identifiers, secrets and CreateTime are chosen by the server that took the
// request and travel in the command, so every replica stores the same values; everything that
// depends on the tables (names → IDs, uniqueness, existence, hashes) is decided by the handlers.
import type { PolicyLinkInput, TokenOut } from './records';

/** What a token request may set (a full replacement on update). */
export interface TokenFields {
  Description?: string;
  Policies?: PolicyLinkInput[] | null;
  Local?: boolean;
}

export interface PolicyFields {
  ID: string;
  Name: string;
  Description?: string;
  Rules?: string;
  Datacenters?: string[] | null;
}

/** What the legacy API sets (Consul's structs.ACL): `ID` is the SecretID. */
export interface LegacyAclFields {
  ID: string;
  Name?: string;
  Type?: string;
  Rules?: string;
}

export interface NewTokenIdentity {
  AccessorID: string;
  SecretID: string;
  /** RFC 3339 with fractional seconds. */
  CreateTime: string;
}

export type AclCommand =
  /** The global-management policy and the anonymous token, created by a new leader when missing. */
  | { type: 'acl.builtins'; createTime: string }
  /**
   * The first management token (`PUT /v1/acl/bootstrap`). With `orCreate` (the leader creating the
   * configured initial-management token) it is created even when bootstrapping is used up, unless a
   * token with that secret exists.
   */
  | { type: 'acl.bootstrap'; token: NewTokenIdentity & { Description: string }; orCreate?: boolean }
  | { type: 'acl.token-create'; token: TokenFields & NewTokenIdentity }
  | { type: 'acl.token-update'; token: TokenFields & { AccessorID: string; SecretID?: string } }
  | { type: 'acl.token-clone'; from: string; token: NewTokenIdentity & { Description?: string } }
  | { type: 'acl.token-delete'; accessorID: string }
  /**
   * The legacy API's set (Consul's ACL.Apply with op "set"): creates or replaces the token whose
   * SecretID is `acl.ID`. `AccessorID` and `CreateTime` are used only when it is created.
   */
  | { type: 'acl.legacy-set'; acl: LegacyAclFields & { AccessorID: string; CreateTime: string } }
  /** The legacy API's destroy: deletes the token with that SecretID (unknown: `true`). */
  | { type: 'acl.legacy-delete'; secretID: string }
  /**
   * A secondary datacenter's replication of the primary's policies and global tokens (Consul's
   * ACLPolicySet/ACLTokenSet batches from acl_replication.go): rows as the primary has them, with
   * this datacenter's Raft indexes, and the IDs the primary no longer has. Internal only.
   */
  | { type: 'acl.replicate'; policies?: ReplicatedRows<ReplicatedPolicy>; tokens?: ReplicatedRows<ReplicatedToken> }
  | { type: 'acl.policy-create'; policy: PolicyFields }
  | { type: 'acl.policy-update'; policy: PolicyFields }
  | { type: 'acl.policy-delete'; id: string };

/** `acl.bootstrap`'s answer: the new token, or the index that used bootstrapping up. */
export type BootstrapResult = { token: TokenOut } | { resetIndex: number };

export interface ReplicatedRows<T> {
  upsert: T[];
  /** Policy IDs, or token AccessorIDs. */
  delete: string[];
}

export interface ReplicatedPolicy {
  ID: string;
  Name: string;
  Description: string;
  Rules: string;
  Datacenters: string[];
}

export interface ReplicatedToken {
  AccessorID: string;
  SecretID: string;
  Description: string;
  Policies: { ID: string }[];
  Type: string;
  Rules: string;
  CreateTime: string;
}
