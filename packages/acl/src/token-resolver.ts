/**
 * Secret → Authorizer, for every request when ACLs are on. Compiling a token costs
 * a merge and a tree build (parsed rules are remembered by parseRules itself), so
 * Authorizers are cached per secret and per set of policies. The owner of the
 * tables calls invalidate() after any token or policy change.
 */
import { Authorizer, DefaultPolicy } from './authorizer';
import { ANONYMOUS_TOKEN_SECRET, GLOBAL_MANAGEMENT_RULES } from './builtins';
import { parseLegacyRules, parseRules } from './rules-parser';
import type { ParsedRules } from './parsed-rules';

/** The parts of a stored token that decide what it may do. */
export interface ResolvableToken {
  readonly Policies?: readonly { readonly ID: string }[] | null;
  /**
   * Legacy tokens (Consul 1.4's `Type`): `management` grants everything, `client` its `Rules`. A
   * token made by the 1.4 API has none; its policies alone decide.
   */
  readonly Type?: string;
  /** A legacy token's own rules, in the legacy syntax (every block a prefix rule). */
  readonly Rules?: string;
}

/**
 * A legacy token's rules as one more policy (Consul's ACLToken.EmbeddedPolicy): management's are the
 * global-management rules, a client's its own text in the legacy syntax. Null for 1.4 tokens.
 */
export function embeddedRules(token: ResolvableToken): { key: string; rules: ParsedRules } | null {
  if (token.Type === 'management') return { key: 'legacy-management', rules: parseRules(GLOBAL_MANAGEMENT_RULES) };
  const text = token.Rules ?? '';
  if (text !== '' || token.Type === 'client') return { key: `legacy-rules:${text}`, rules: parseLegacyRules(text) };
  return null;
}

/** The parts of a stored policy that decide what it grants. */
export interface ResolvablePolicy {
  readonly Rules: string;
  /** Where the policy applies; empty or absent means every datacenter. */
  readonly Datacenters?: readonly string[] | null;
}

/** Read access to the ACL tables (the store provides it). */
export interface TokenLookup {
  tokenBySecret(secret: string): ResolvableToken | undefined;
  policyById(id: string): ResolvablePolicy | undefined;
}

export interface TokenResolverOptions {
  /** The local datacenter: policies limited to other datacenters are ignored here. */
  readonly datacenter: string;
  readonly defaultPolicy: DefaultPolicy;
  /** How many secrets to keep compiled Authorizers for (oldest dropped first). */
  readonly maxCachedTokens?: number;
}

const DEFAULT_MAX_CACHED_TOKENS = 10_000;

/** A Map that forgets its oldest entry when full. */
class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();
  constructor(private readonly limit: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V): void {
    if (this.entries.size >= this.limit) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, value);
  }

  clear(): void {
    this.entries.clear();
  }
}

export class TokenResolver {
  private readonly bySecret: BoundedCache<string, Authorizer>;
  private readonly byPolicySet: BoundedCache<string, Authorizer>;

  constructor(
    private readonly lookup: TokenLookup,
    private readonly options: TokenResolverOptions,
  ) {
    const limit = options.maxCachedTokens ?? DEFAULT_MAX_CACHED_TOKENS;
    this.bySecret = new BoundedCache(limit);
    this.byPolicySet = new BoundedCache(limit);
  }

  /**
   * The Authorizer for a request's token. No token (undefined or empty) means the
   * anonymous token; a secret no token has is 'not-found' (403 `ACL not found`),
   * never anonymous. Root secrets (allow/deny/manage) are not tokens either: check
   * isRootSecret() first to answer Consul's 500.
   *
   * Throws RuleError if a stored policy's rules no longer parse: ignoring such a
   * policy could drop its deny rules and so grant more than intended.
   */
  resolve(secret: string | undefined): Authorizer | 'not-found' {
    const effective = secret === undefined || secret === '' ? ANONYMOUS_TOKEN_SECRET : secret;
    const cached = this.bySecret.get(effective);
    if (cached !== undefined) return cached;

    const token = this.lookup.tokenBySecret(effective);
    if (token === undefined && effective !== ANONYMOUS_TOKEN_SECRET) return 'not-found';
    // Until the leader has created the anonymous token, a request without a token
    // gets what the anonymous token would have with no policies: the default policy.
    const authorizer = this.compile(token?.Policies ?? [], token ? embeddedRules(token) : null);
    this.bySecret.set(effective, authorizer);
    return authorizer;
  }

  /** Forget everything compiled; call after any token or policy is written or deleted. */
  invalidate(): void {
    this.bySecret.clear();
    this.byPolicySet.clear();
  }

  private compile(links: readonly { readonly ID: string }[], embedded: { key: string; rules: ParsedRules } | null): Authorizer {
    const applicable: { id: string; rules: string }[] = [];
    const seen = new Set<string>();
    for (const link of links) {
      if (seen.has(link.ID)) continue;
      seen.add(link.ID);
      const policy = this.lookup.policyById(link.ID);
      // A deleted policy silently stops granting (and denying) anything.
      if (policy === undefined || !this.appliesHere(policy)) continue;
      applicable.push({ id: link.ID, rules: policy.Rules });
    }

    const ids = applicable.map((p) => p.id).sort().join(',');
    // A NUL cannot be in a policy ID, so an embedded policy's key never collides with a set of IDs.
    const setKey = embedded ? `${ids}\0${embedded.key}` : ids;
    const shared = this.byPolicySet.get(setKey);
    if (shared !== undefined) return shared;
    const parsed = applicable.map((p) => parseRules(p.rules));
    if (embedded) parsed.push(embedded.rules);
    const authorizer = new Authorizer(parsed, this.options.defaultPolicy);
    this.byPolicySet.set(setKey, authorizer);
    return authorizer;
  }

  private appliesHere(policy: ResolvablePolicy): boolean {
    const dcs = policy.Datacenters;
    return dcs === undefined || dcs === null || dcs.length === 0 || dcs.includes(this.options.datacenter);
  }
}
