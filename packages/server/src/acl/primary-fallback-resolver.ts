// Token resolution in a secondary datacenter (docs/acl.md "Several datacenters"): tokens this
// datacenter holds — replicated global tokens, its Local tokens, the anonymous token — resolve
// against its own tables (StoreAclResolver); a secret it does not hold (a token made in the primary
// and not replicated yet, or every global token when only policies are replicated) is asked of the
// primary, as Consul 1.4's secondaries resolve tokens remotely. The primary's answer is kept for
// `acl.token_ttl`, and when the primary cannot be reached `acl.down_policy` decides — both exactly as
// on a client agent, by the same CachedAclResolver, whose fetch here is a read in the primary.
import { isRootSecret, type Authorizer } from '@registry/acl';
import { ACL_TOKENS, type Store } from '@registry/store';
import type { AclResolver } from '../rpc/acl-resolver';
import type { CachedAclResolver } from './cached-resolver';
import type { StoreAclResolver } from './store-resolver';

export class PrimaryFallbackResolver implements AclResolver {
  readonly enabled = true;
  private cancelWatch: (() => void) | null = null;

  constructor(
    private readonly local: StoreAclResolver,
    private readonly primary: CachedAclResolver,
    private readonly store: Store,
  ) {
    this.watchTokens();
  }

  /**
   * The primary's kept answers are forgotten whenever this datacenter's tokens change: replication
   * just brought or deleted some (a token deleted in the primary must not live on here for the
   * TTL because it was once asked about before it was replicated).
   */
  private watchTokens(): void {
    this.cancelWatch = this.store.watch([ACL_TOKENS], () => {
      this.primary.clear();
      this.watchTokens();
    });
  }

  /** Held here: no token (anonymous), a root secret (the local resolver's 500), or a secret in the tables. */
  private heldHere(secret: string | undefined): boolean {
    return !secret || isRootSecret(secret) || this.store.aclLookup().tokenBySecret(secret) !== undefined;
  }

  resolve(secret: string | undefined): Authorizer {
    return this.heldHere(secret) ? this.local.resolve(secret) : this.primary.resolve(secret);
  }

  async prepare(secret: string | undefined, stale = false): Promise<void> {
    // First what this datacenter's leader has committed (a Local token made a moment ago).
    await this.local.prepare(secret, stale);
    if (!this.heldHere(secret)) await this.primary.prepare(secret);
  }

  prepareForwarded(secret: string | undefined): Promise<void> | undefined {
    return this.heldHere(secret) ? undefined : this.primary.prepare(secret);
  }

  close(): void {
    this.cancelWatch?.();
    this.cancelWatch = null;
    this.local.close();
  }
}
