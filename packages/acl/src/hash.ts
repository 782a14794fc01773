/**
 * The `Hash` field of tokens and policies: BLAKE2b-256 over the fields that define
 * what the object grants, in Consul's order, base64-encoded (44 characters).
 * Fields are concatenated without separators, as Consul does.
 */
import { blake2b as nobleBlake2b } from '@noble/hashes/blake2';

/**
 * The BLAKE2b digest of `data`, `outputLength` bytes long (1–64), unkeyed (RFC 7693).
 * Node's crypto offers only the 64-byte variant (`blake2b512`), and a truncated
 * BLAKE2b-512 is not BLAKE2b-256 (the length is mixed into the initial state), so the
 * digest comes from @noble/hashes, which takes the length as a parameter.
 */
export function blake2b(data: Uint8Array, outputLength: number): Buffer {
  if (!Number.isInteger(outputLength) || outputLength < 1 || outputLength > 64) {
    throw new RangeError(`BLAKE2b output length must be 1..64 bytes, got ${outputLength}`);
  }
  const digest = nobleBlake2b(data, { dkLen: outputLength });
  return Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength);
}

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
