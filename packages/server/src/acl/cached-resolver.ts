// ACLs on a client agent (Consul's client-side ACLResolver): the agent has no ACL tables, so it
// asks a server what a token grants (the read `acl.token-resolve`, acl/token-grant.ts) and keeps
// the answer for `acl.token_ttl`. `prepare(secret)` does the asking, once per request, before the
// route runs; `resolve(secret)` then answers synchronously from the cache, as the AclResolver every
// route uses must. When no server answers, `acl.down_policy` decides (config/acl-cache-config.ts):
//   allow        — everything is allowed for that request;
//   deny         — nothing is (a cached answer is not used);
//   extend-cache — a cached answer is kept, however old, until a server answers again; a token
//                  never seen acts as deny (Consul: "if a non-cached ACL is used, acts like deny");
//   async-cache  — as extend-cache, and an expired answer is used at once while a fresh one is
//                  fetched in the background.
// Unknown tokens are remembered too (403 `ACL not found` for the TTL), as Consul caches them.
import { Authorizer, isRootSecret, ROOT_TOKEN_ERROR, TokenResolver, type DefaultPolicy, type TokenLookup } from '@registry/acl';
import { forbidden, RegistryError, serverError } from '../errors';
import type { DownPolicy } from '../config/acl-cache-config';
import type { AclResolver } from '../rpc/acl-resolver';
import { ACL_NOT_FOUND, isAclNotFound } from './store-resolver';
import type { TokenGrant } from './token-grant';
import { monotonicMs } from '../time';

export interface CachedAclResolverOptions {
  datacenter: string;
  /** The parent of every token's rules: this agent's `acl.default_policy`, as in Consul. */
  defaultPolicy: DefaultPolicy;
  downPolicy: () => DownPolicy;
  tokenTtlMs: () => number;
  /** Ask a server; throws the server's error (its kind intact) or a transport failure. */
  fetch(secret: string | undefined): Promise<TokenGrant>;
  /** Told when the servers could not be asked and the down policy answered. */
  onDown?(err: Error, policy: DownPolicy): void;
  now?: () => number;
  maxEntries?: number;
}

/** One token's answer: what `resolve` says, and since when (0: ask again at the next request). */
interface Entry {
  answer: Authorizer | 'not-found';
  at: number;
}

const DEFAULT_MAX_ENTRIES = 10_000;
const ANONYMOUS = '';

export class CachedAclResolver implements AclResolver {
  readonly enabled = true;
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly now: () => number;
  /** Fetches made (tests, stats). */
  fetches = 0;

  constructor(private readonly o: CachedAclResolverOptions) {
    this.now = o.now ?? monotonicMs;
  }

  async prepare(secret: string | undefined): Promise<void> {
    if (secret !== undefined && isRootSecret(secret)) return; // resolve answers 500, as a server does
    const key = secret ?? ANONYMOUS;
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.at < this.o.tokenTtlMs()) return;
    const refresh = this.refresh(key);
    if (entry && entry.at > 0 && this.o.downPolicy() === 'async-cache') return; // the old answer serves meanwhile
    await refresh;
  }

  resolve(secret: string | undefined): Authorizer {
    if (secret !== undefined && isRootSecret(secret)) throw serverError(ROOT_TOKEN_ERROR);
    const entry = this.entries.get(secret ?? ANONYMOUS);
    // Every caller prepares first (the HTTP edge, resolveToken): a miss is a caller that did not.
    if (!entry) throw serverError('ACL token not resolved on this client agent');
    if (entry.answer === 'not-found') throw forbidden(ACL_NOT_FOUND);
    return entry.answer;
  }

  /** Forget every answer (the agent's tokens changed, tests). */
  clear(): void {
    this.entries.clear();
  }

  /** One fetch per token at a time; concurrent requests with the same token wait for it. */
  private refresh(key: string): Promise<void> {
    let running = this.inFlight.get(key);
    if (!running) {
      running = this.fetchInto(key).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, running);
    }
    return running;
  }

  private async fetchInto(key: string): Promise<void> {
    this.fetches++;
    try {
      const grant = await this.o.fetch(key === ANONYMOUS ? undefined : key);
      this.put(key, { answer: this.compile(key, grant), at: this.now() });
    } catch (err) {
      this.put(key, this.answerWithout(key, err as Error));
    }
  }

  /** The servers' refusal is an answer; anything else means no server could say (the down policy). */
  private answerWithout(key: string, err: Error): Entry {
    if (isAclNotFound(err)) return { answer: 'not-found', at: this.now() };
    // Servers with ACLs off: as Consul's client, allow until asked again.
    if (err instanceof RegistryError && err.kind === 'AclDisabled') return { answer: Authorizer.allowAll(), at: this.now() };
    const policy = this.o.downPolicy();
    this.o.onDown?.(err, policy);
    const cached = this.entries.get(key);
    if ((policy === 'extend-cache' || policy === 'async-cache') && cached && cached.at > 0) return { answer: cached.answer, at: this.now() };
    // Not remembered (at 0): the next request asks the servers again.
    return { answer: policy === 'allow' ? Authorizer.allowAll() : Authorizer.denyAll(), at: 0 };
  }

  /** The Authorizer a server would build: the acl package's TokenResolver over this one token. */
  private compile(key: string, grant: TokenGrant): Authorizer {
    const byId = new Map(grant.policies.map((p) => [p.ID, p]));
    const lookup: TokenLookup = {
      tokenBySecret: () => ({ Policies: grant.policies.map((p) => ({ ID: p.ID })), ...(grant.legacy ?? {}) }),
      policyById: (id) => byId.get(id),
    };
    const answer = new TokenResolver(lookup, { datacenter: this.o.datacenter, defaultPolicy: this.o.defaultPolicy, maxCachedTokens: 1 }).resolve(key || undefined);
    if (answer === 'not-found') throw forbidden(ACL_NOT_FOUND); // not reached: the lookup knows the token
    return answer;
  }

  private put(key: string, entry: Entry): void {
    if (!this.entries.has(key) && this.entries.size >= (this.o.maxEntries ?? DEFAULT_MAX_ENTRIES)) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, entry);
  }
}
