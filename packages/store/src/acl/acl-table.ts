// The ACL tables (Consul's state/acl.go): tokens by AccessorID with a SecretID index, policies by ID
// with a case-insensitive name index, and the index at which the cluster was bootstrapped. The
// mutators assume the caller validated the command and report every change to the Txn.
import { Fields, listStream } from '../snapshot-stream';
import type { Txn } from '../txn';
import { ACL_POLICIES, ACL_TOKENS } from './keys';
import type { PolicyRecord, TokenRecord } from './records';

export interface AclTableDump {
  tokens: TokenRecord[];
  policies: PolicyRecord[];
  /** Raft index of the bootstrap that used up `PUT /v1/acl/bootstrap`; 0 while it is still allowed. */
  bootstrapIndex: number;
}

/** AccessorIDs and policy IDs are UUIDs and compare case-insensitively; secrets are exact strings. */
const idKey = (id: string) => id.toLowerCase();
const nameKey = (name: string) => name.toLowerCase();

export class AclTable {
  private readonly tokens = new Map<string, TokenRecord>();
  /** SecretID → AccessorID key */
  private readonly secrets = new Map<string, string>();
  private readonly policies = new Map<string, PolicyRecord>();
  /** folded Name → policy ID key */
  private readonly names = new Map<string, string>();
  private bootstrappedAt = 0;

  // ---- reads ----

  token(accessorID: string): TokenRecord | undefined {
    return this.tokens.get(idKey(accessorID));
  }

  tokenBySecret(secret: string): TokenRecord | undefined {
    const key = this.secrets.get(secret);
    return key === undefined ? undefined : this.tokens.get(key);
  }

  allTokens(): TokenRecord[] {
    return [...this.tokens.values()];
  }

  policy(id: string): PolicyRecord | undefined {
    return this.policies.get(idKey(id));
  }

  policyByName(name: string): PolicyRecord | undefined {
    const key = this.names.get(nameKey(name));
    return key === undefined ? undefined : this.policies.get(key);
  }

  allPolicies(): PolicyRecord[] {
    return [...this.policies.values()];
  }

  get bootstrapIndex(): number {
    return this.bootstrappedAt;
  }

  // ---- writes ----

  putToken(rec: TokenRecord, txn: Txn): void {
    const key = idKey(rec.AccessorID);
    const old = this.tokens.get(key);
    if (old && old.SecretID !== rec.SecretID) this.secrets.delete(old.SecretID);
    this.tokens.set(key, rec);
    this.secrets.set(rec.SecretID, key);
    txn.bump(ACL_TOKENS);
  }

  deleteToken(accessorID: string, txn: Txn): void {
    const key = idKey(accessorID);
    const old = this.tokens.get(key);
    if (!old) return;
    this.tokens.delete(key);
    this.secrets.delete(old.SecretID);
    txn.bump(ACL_TOKENS);
  }

  putPolicy(rec: PolicyRecord, txn: Txn): void {
    const key = idKey(rec.ID);
    const old = this.policies.get(key);
    if (old) this.names.delete(nameKey(old.Name));
    this.policies.set(key, rec);
    this.names.set(nameKey(rec.Name), key);
    txn.bump(ACL_POLICIES);
  }

  deletePolicy(id: string, txn: Txn): void {
    const key = idKey(id);
    const old = this.policies.get(key);
    if (!old) return;
    this.policies.delete(key);
    this.names.delete(nameKey(old.Name));
    txn.bump(ACL_POLICIES);
  }

  markBootstrapped(txn: Txn): void {
    this.bootstrappedAt = txn.index;
    txn.bump(ACL_TOKENS);
  }

  // ---- snapshots and checks ----

  dump(): AclTableDump {
    return { tokens: this.allTokens(), policies: this.allPolicies(), bootstrapIndex: this.bootstrappedAt };
  }

  /** dump() as of now, serialised later (token and policy records are replaced, never changed). */
  capture(): Fields {
    return new Fields([
      ['tokens', listStream(this.allTokens())],
      ['policies', listStream(this.allPolicies())],
      ['bootstrapIndex', this.bootstrappedAt],
    ]);
  }

  static load(dump: AclTableDump | undefined): AclTable {
    const t = new AclTable();
    if (!dump) return t; // a snapshot taken before the ACL tables existed
    for (const rec of dump.tokens) {
      t.tokens.set(idKey(rec.AccessorID), rec);
      t.secrets.set(rec.SecretID, idKey(rec.AccessorID));
    }
    for (const rec of dump.policies) {
      t.policies.set(idKey(rec.ID), rec);
      t.names.set(nameKey(rec.Name), idKey(rec.ID));
    }
    t.bootstrappedAt = dump.bootstrapIndex ?? 0;
    return t;
  }

  invariants(): string[] {
    const problems: string[] = [];
    if (this.secrets.size !== this.tokens.size) problems.push(`acl: ${this.secrets.size} secrets for ${this.tokens.size} tokens`);
    for (const [secret, key] of this.secrets) {
      if (this.tokens.get(key)?.SecretID !== secret) problems.push(`acl: secret index points ${key} at the wrong token`);
    }
    if (this.names.size !== this.policies.size) problems.push(`acl: ${this.names.size} policy names for ${this.policies.size} policies`);
    for (const [name, key] of this.names) {
      const p = this.policies.get(key);
      if (!p || nameKey(p.Name) !== name) problems.push(`acl: name index points ${name} at the wrong policy`);
    }
    return problems;
  }
}
