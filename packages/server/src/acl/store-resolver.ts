// ACLs enabled: a request's secret → Authorizer through the acl package's TokenResolver over this
// server's store. Its cache is dropped whenever a token or policy changes (or a snapshot is
// restored), from a watch on the ACL tables' keys, synchronously inside the apply that changed them.
import { performance } from 'node:perf_hooks';
import { Authorizer, isRootSecret, ROOT_TOKEN_ERROR, TokenResolver, type DefaultPolicy, type TokenLookup } from '@registry/acl';
import { ACL_POLICIES, ACL_TOKENS, type Store } from '@registry/store';
import { forbidden, serverError } from '../errors';
import type { AclResolver } from './authorization';

export const ACL_NOT_FOUND = 'ACL not found';

export interface StoreAclResolverOptions {
  datacenter: string;
  defaultPolicy: DefaultPolicy;
  /** Told how long each resolution took and whether the cache answered it (metrics). */
  timed?: (ms: number, cacheHit: boolean) => void;
}

export class StoreAclResolver implements AclResolver {
  readonly enabled = true;
  private readonly tokens: TokenResolver;
  private cancelWatch: (() => void) | null = null;
  private readonly timed: ((ms: number, cacheHit: boolean) => void) | undefined;
  /** Set when the resolver had to read a token (a cache miss): the cache itself says nothing. */
  private lookedUp = false;

  constructor(
    private readonly store: Store,
    options: StoreAclResolverOptions,
  ) {
    this.timed = options.timed;
    this.tokens = new TokenResolver(this.timed ? this.noticingLookups(store.aclLookup()) : store.aclLookup(), options);
    this.watchTables();
  }

  /** Unknown secret → 403 `ACL not found`; `allow`/`deny`/`manage` → 500 `Cannot resolve root ACL`. */
  resolve(secret: string | undefined): Authorizer {
    if (secret !== undefined && isRootSecret(secret)) throw serverError(ROOT_TOKEN_ERROR);
    const authz = this.timed ? this.timedResolve(secret) : this.tokens.resolve(secret);
    if (authz === 'not-found') throw forbidden(ACL_NOT_FOUND);
    return authz;
  }

  private timedResolve(secret: string | undefined): Authorizer | 'not-found' {
    this.lookedUp = false;
    const started = performance.now();
    const authz = this.tokens.resolve(secret);
    this.timed!(performance.now() - started, !this.lookedUp);
    return authz;
  }

  private noticingLookups(lookup: TokenLookup): TokenLookup {
    return {
      tokenBySecret: (secret) => {
        this.lookedUp = true;
        return lookup.tokenBySecret(secret);
      },
      policyById: (id) => lookup.policyById(id),
    };
  }

  /** Stop following the store (the agent is stopping). */
  close(): void {
    this.cancelWatch?.();
    this.cancelWatch = null;
  }

  private watchTables(): void {
    // Watches are one-shot: re-arm before anything else can run.
    this.cancelWatch = this.store.watch([ACL_TOKENS, ACL_POLICIES], () => {
      this.tokens.invalidate();
      this.watchTables();
    });
  }
}
