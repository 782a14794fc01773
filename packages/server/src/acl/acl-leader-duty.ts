// The leader's ACL work on taking office (Consul's initializeACLs): create the built-in policy and
// anonymous token when missing, then the configured initial-management token. The store is
// replicated, so these are commands through Raft — a follower never creates anything itself.
// Retries until done or leadership ends.
import { generateUUID, MASTER_TOKEN_DESCRIPTION, ANONYMOUS_TOKEN_ACCESSOR_ID, GLOBAL_MANAGEMENT_POLICY_ID } from '@registry/acl';
import type { Command, Store } from '@registry/store';
import type { LeaderDuty } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';

const RETRY_MS = 1_000;

export class AclLeaderDuty implements LeaderDuty {
  readonly name = 'acl';
  private active = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly apply: (cmd: Command) => Promise<unknown>,
    private readonly initialManagement: string | undefined,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.active = true;
    void this.run();
  }

  stop(): void {
    this.active = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async run(): Promise<void> {
    if (!this.active) return;
    try {
      await this.initialize();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'ACL initialisation failed; retrying');
      if (this.active) this.timer = setTimeout(() => void this.run(), RETRY_MS);
    }
  }

  private async initialize(): Promise<void> {
    const now = new Date().toISOString();
    const builtinsMissing =
      this.store.aclPolicy(GLOBAL_MANAGEMENT_POLICY_ID).value === null || this.store.aclToken(ANONYMOUS_TOKEN_ACCESSOR_ID).value === null;
    if (builtinsMissing) {
      await this.apply({ type: 'acl.builtins', createTime: now });
      this.logger.info('created the global-management policy and the anonymous token');
    }
    const secret = this.initialManagement;
    if (secret && this.active && this.store.aclTokenBySecret(secret).value === null) {
      // Through the bootstrap path (so bootstrapping is then used up), or created anyway if it was.
      await this.apply({
        type: 'acl.bootstrap',
        token: { AccessorID: generateUUID(), SecretID: secret, CreateTime: now, Description: MASTER_TOKEN_DESCRIPTION },
        orCreate: true,
      });
      this.logger.info('created the initial management token');
    }
  }
}
