// Turning ACLs on for a server agent: the store-backed resolver for every request (given to the Rpc
// when it is built), and the leader duties that replicate and create the built-ins and the initial
// management token.
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
import type { AclResolver } from '../rpc/acl-resolver';

/**
 * The Rpc as the resolver uses it: a follower catches up with the leader before resolving, and a
 * secondary asks the primary for a token it does not hold. A late-bound port (agent/ passes
 * closures over the Rpc built after the resolver): Rpc checks every request with the resolver and
 * the resolver asks Rpc, so one of the two must be told of the other after it is built. They run
 * only once requests arrive, when both exist.
 */
export interface AclRpc {
  caughtUpWithLeader(): Promise<boolean>;
  read: Rpc['read'];
}

export interface AclParts {
  datacenter: string;
  /** `primary_datacenter`; undefined: this datacenter. */
  primaryDatacenter?: string;
  store: Store;
  logger: Logger;
  timed?: (ms: number, cacheHit: boolean) => void;
  nodeName?: string;
  /** The agent master token (acl/agent-master.ts), read on use: a reload or PUT /v1/agent/token changes it. */
  agentMaster?: () => string | undefined;
}

/** With `acl.enabled`, the store-backed resolver the Rpc checks every request with; otherwise undefined (allow-all). */
export function aclResolverFor(acl: AclConfig, parts: AclParts & { rpc: AclRpc }): AclResolver | undefined {
  if (!acl.enabled) return undefined;
  const primary = parts.primaryDatacenter ?? parts.datacenter;
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
  return parts.nodeName === undefined || !parts.agentMaster ? serving : withAgentMaster(serving, parts.nodeName, parts.agentMaster);
}

/** With `acl.enabled`, the leader duties: replication from the primary, the built-ins and the initial management token. */
export function installAclDuties(
  acl: AclConfig,
  parts: AclParts & { rpc: Rpc; leaderDuties: LeaderDuties; replicationToken: () => string | undefined },
): void {
  if (!acl.enabled) return;
  const primary = parts.primaryDatacenter ?? parts.datacenter;
  // On every server, so that GET /v1/acl/replication answers (Enabled: false) where nothing replicates.
  parts.leaderDuties.add(
    new AclReplication({
      store: parts.store,
      rpc: parts.rpc,
      datacenter: parts.datacenter,
      primary,
      replicationToken: parts.replicationToken,
      replicateTokens: acl.enableTokenReplication ?? false,
      logger: parts.logger,
    }),
  );
  const apply = (cmd: Command) => parts.rpc.apply(cmd, { internal: true });
  // The initial management token is the primary's (Consul creates it only in the ACL datacenter);
  // a secondary gets it, like every global token, by replication.
  const initialManagement = primary === parts.datacenter ? acl.tokens.initialManagement : undefined;
  parts.leaderDuties.add(new AclLeaderDuty(parts.store, apply, initialManagement, parts.logger));
}
