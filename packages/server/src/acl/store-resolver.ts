// ACLs enabled: a request's secret → Authorizer through the acl package's TokenResolver over this
// server's store. Its cache is dropped whenever a token or policy changes (or a snapshot is
// restored), from a watch on the ACL tables' keys, synchronously inside the apply that changed them.
import { performance } from 'node:perf_hooks';
import { Authorizer, isRootSecret, ROOT_TOKEN_ERROR, TokenResolver, type DefaultPolicy, type TokenLookup } from '@registry/acl';
import { ACL_POLICIES, ACL_TOKENS, type Store } from '@registry/store';
import { forbidden, RegistryError, serverError } from '../errors';
import type { AclResolver } from '../rpc/acl-resolver';

export const ACL_NOT_FOUND = 'ACL not found';

/** Whether `err` is the refusal of a secret no token has (as it crosses from a server, its kind intact). */
export const isAclNotFound = (err: unknown): boolean => err instanceof RegistryError && err.kind === 'PermissionDenied' && err.message === ACL_NOT_FOUND;

export interface StoreAclResolverOptions {
  datacenter: string;
  defaultPolicy: DefaultPolicy;
  /** Told how long each resolution took and whether the cache answered it (metrics). */
  timed?: (ms: number, cacheHit: boolean) => void;
  /** Apply what the leader has committed (rpc.ts caughtUpWithLeader); settles either way. */
  catchUp?: () => Promise<unknown>;
}

export class StoreAclResolver implements AclResolver {
  readonly enabled = true;
  private readonly tokens: TokenResolver;
  private cancelWatch: (() => void) | null = null;
  private readonly timed: ((ms: number, cacheHit: boolean) => void) | undefined;
  /** Set when the resolver had to read a token (a cache miss): the cache itself says nothing. */
  private lookedUp = false;

  private readonly catchUp: (() => Promise<unknown>) | undefined;
  private readonly lookup: TokenLookup;

  constructor(
    private readonly store: Store,
    options: StoreAclResolverOptions,
  ) {
    this.timed = options.timed;
    this.catchUp = options.catchUp;
    this.lookup = store.aclLookup();
    this.tokens = new TokenResolver(this.timed ? this.noticingLookups(this.lookup) : this.lookup, options);
    this.watchTables();
  }

  /** Unknown secret → 403 `ACL not found`; `allow`/`deny`/`manage` → 500 `Cannot resolve root ACL`. */
  resolve(secret: string | undefined): Authorizer {
    if (secret !== undefined && isRootSecret(secret)) throw serverError(ROOT_TOKEN_ERROR);
    const authz = this.timed ? this.timedResolve(secret) : this.tokens.resolve(secret);
    if (authz === 'not-found') throw forbidden(ACL_NOT_FOUND);
    return authz;
  }

  /**
   * A secret unknown here may be a token the leader has just committed (a script makes a token,
   * then uses it on whichever server it reaches): this server first applies what the leader had
   * committed, so that the request is answered as the leader would answer it. Known secrets, the
   * anonymous token, `?stale` requests and the leader itself have nothing to wait for.
   */
  prepare(secret: string | undefined, stale = false): Promise<void> | undefined {
    // The table itself, not the resolver: its cache and its metrics are the route's resolution's.
    if (!this.catchUp || stale || !secret || isRootSecret(secret) || this.lookup.tokenBySecret(secret) != null) return undefined;
    return this.catchUp().then(
      () => undefined,
      () => undefined,
    );
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
