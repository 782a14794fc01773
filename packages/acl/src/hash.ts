/**
 * The `Hash` field of tokens and policies: BLAKE2b-256 over the fields that define
 * what the object grants, in Consul's order, base64-encoded (44 characters).
 * Fields are concatenated without separators, as Consul does.
 */
import { blake2b } from './blake2b';

export interface TokenHashInput {
  readonly Description: string;
  /** `management` for legacy-style management tokens; empty for 1.4 tokens. */
  readonly Type?: string;
  /** Legacy rule text; empty for 1.4 tokens. */
  readonly Rules?: string;
  readonly Local: boolean;
  /** The linked policy IDs, in the token's order. */
  readonly PolicyIDs: readonly string[];
}

export interface PolicyHashInput {
  readonly Name: string;
  readonly Description: string;
  readonly Rules: string;
  readonly Datacenters?: readonly string[] | null;
}

function digest(parts: readonly string[]): string {
  return blake2b(Buffer.from(parts.join(''), 'utf8'), 32).toString('base64');
}

export function tokenHash(token: TokenHashInput): string {
  return digest([
    token.Description,
    token.Type ?? '',
    token.Rules ?? '',
    token.Local ? 'local' : 'global',
    ...token.PolicyIDs,
  ]);
}

export function policyHash(policy: PolicyHashInput): string {
  return digest([policy.Name, policy.Description, policy.Rules, ...(policy.Datacenters ?? [])]);
}
