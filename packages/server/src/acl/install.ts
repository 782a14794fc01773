// Turning ACLs on for an agent: the store-backed resolver for every request, and the leader duty
// that creates the built-ins and the initial management token.
import type { Command, Store } from '@registry/store';
import type { LeaderDuties } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';
import type { AclConfig } from '../config/config';
import type { Rpc } from '../rpc/rpc';
import { AclLeaderDuty } from './acl-leader-duty';
import { AclReplication } from './acl-replication';
import { CachedAclResolver } from './cached-resolver';
import { PrimaryFallbackResolver } from './primary-fallback-resolver';
import type { TokenGrant } from './token-grant';
import { StoreAclResolver } from './store-resolver';
import { withAgentMaster } from './agent-master';
import { defaultQueryOptions } from '../rpc/query-options';

/** With `acl.enabled`, install the real resolver and the leader duty; otherwise leave ACLs off. */
export function installAcl(
  acl: AclConfig,
  parts: {
    datacenter: string;
    /** `primary_datacenter`; undefined: this datacenter. */
    primaryDatacenter?: string;
    store: Store;
    rpc: Rpc;
    leaderDuties: LeaderDuties;
    logger: Logger;
    timed?: (ms: number, cacheHit: boolean) => void;
    nodeName?: string;
  },
): StoreAclResolver | undefined {
  if (!acl.enabled) return undefined;
  const primary = parts.primaryDatacenter ?? parts.datacenter;
  // On every server, so that GET /v1/acl/replication answers (Enabled: false) where nothing replicates.
  parts.leaderDuties.add(
    new AclReplication({
      store: parts.store,
      rpc: parts.rpc,
      datacenter: parts.datacenter,
      primary,
      replicationToken: () => acl.tokens.replication,
      replicateTokens: acl.enableTokenReplication ?? false,
      logger: parts.logger,
    }),
  );
  const resolver = new StoreAclResolver(parts.store, { datacenter: parts.datacenter, defaultPolicy: acl.defaultPolicy, timed: parts.timed, catchUp: () => parts.rpc.caughtUpWithLeader() });
  // In a secondary, a token this datacenter does not hold is asked of the primary
  // (acl/primary-fallback-resolver.ts), kept for token_ttl, with down_policy when it cannot be reached.
  const serving =
    primary === parts.datacenter
      ? resolver
      : new PrimaryFallbackResolver(
          resolver,
          new CachedAclResolver({
            datacenter: parts.datacenter,
            defaultPolicy: acl.defaultPolicy,
            downPolicy: () => acl.downPolicy,
            tokenTtlMs: () => acl.tokenTtlMs,
            fetch: async (secret) =>
              (
                await parts.rpc.read(
                  'acl.token-resolve',
                  {},
                  defaultQueryOptions(primary, secret, { consistency: 'stale' }),
                )
              ).result.value as TokenGrant,
            onDown: (err, policy) => parts.logger.warn({ err: err.message, downPolicy: policy, primary }, 'the primary datacenter could not resolve a token; the down policy applies'),
          }),
          parts.store,
        );
  // The agent master token is this agent's own (acl/agent-master.ts); its value is read live.
  parts.rpc.setAclResolver(parts.nodeName === undefined ? serving : withAgentMaster(serving, parts.nodeName, () => acl.tokens.agentMaster));
  const apply = (cmd: Command) => parts.rpc.apply(cmd, { internal: true });
  // The initial management token is the primary's (Consul creates it only in the ACL datacenter);
  // a secondary gets it, like every global token, by replication.
  const initialManagement = primary === parts.datacenter ? acl.tokens.initialManagement : undefined;
  parts.leaderDuties.add(new AclLeaderDuty(parts.store, apply, initialManagement, parts.logger));
  return resolver;
}
