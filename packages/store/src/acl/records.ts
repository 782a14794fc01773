// The ACL tables' rows and what reads return (Consul 1.4's ACLToken / ACLPolicy JSON, field order
// included). Rows are replaced, never mutated, and never handed out: reads build fresh outputs.

/** A token's link to a policy as stored: only the ID, so a renamed policy keeps its tokens. */
export interface StoredPolicyLink {
  readonly ID: string;
}

export interface TokenRecord {
  readonly AccessorID: string;
  readonly SecretID: string;
  readonly Description: string;
  readonly Policies: readonly StoredPolicyLink[];
  readonly Local: boolean;
  /** RFC 3339 with fractional seconds, stamped by the server that took the request. */
  readonly CreateTime: string;
  /**
   * Consul 1.4's legacy `Type`: `management` for bootstrap and initial-management tokens and legacy
   * management tokens, `client` for legacy client tokens, "" for tokens of the 1.4 API (it enters
   * the Hash). A token with a Type is visible through the legacy API.
   */
  readonly Type: string;
  /** A legacy token's own rules (legacy syntax); absent or "" for every other token. */
  readonly Rules?: string;
  readonly Hash: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

export interface PolicyRecord {
  readonly ID: string;
  readonly Name: string;
  readonly Description: string;
  readonly Rules: string;
  /** Where the policy applies; empty = every datacenter. */
  readonly Datacenters: readonly string[];
  readonly Hash: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/** A policy link in requests (ID and/or Name) and in answers (both). */
export interface PolicyLink {
  ID: string;
  Name: string;
}

export interface PolicyLinkInput {
  ID?: string;
  Name?: string;
}

export interface TokenOut {
  AccessorID: string;
  SecretID: string;
  Description: string;
  /** null when the token links no policy (the anonymous token); links to deleted policies are left out. */
  Policies: PolicyLink[] | null;
  /** A legacy token's rules; omitted when empty (Consul's `json:",omitempty"`). */
  Rules?: string;
  Local: boolean;
  CreateTime: string;
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** A token in a list: no SecretID nor Rules; `Legacy: true` for tokens with legacy rules. */
export type TokenListEntry = Omit<TokenOut, 'SecretID' | 'Rules'> & { Legacy?: true };

/** A token as the legacy API shows it (Consul's structs.ACL): its `ID` is the SecretID. */
export interface LegacyAclOut {
  ID: string;
  Name: string;
  Type: string;
  Rules: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface PolicyOut {
  ID: string;
  Name: string;
  Description: string;
  Rules: string;
  /** Omitted when the policy applies everywhere. */
  Datacenters?: string[];
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** A policy in a list: no Rules; Datacenters null when unrestricted. */
export interface PolicyListEntry {
  ID: string;
  Name: string;
  Description: string;
  Datacenters: string[] | null;
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
}
