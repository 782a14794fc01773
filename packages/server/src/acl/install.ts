// Turning ACLs on for an agent: the store-backed resolver for every request, and the leader duty
// that creates the built-ins and the initial management token.
import type { Command, Store } from '@registry/store';
import type { LeaderDuties } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';
import type { AclConfig } from '../config/config';
import type { Rpc } from '../rpc/rpc';
import { AclLeaderDuty } from './acl-leader-duty';
import { StoreAclResolver } from './store-resolver';
import { withAgentMaster } from './agent-master';

/** With `acl.enabled`, install the real resolver and the leader duty; otherwise leave ACLs off. */
export function installAcl(
  acl: AclConfig,
  parts: { datacenter: string; store: Store; rpc: Rpc; leaderDuties: LeaderDuties; logger: Logger; timed?: (ms: number, cacheHit: boolean) => void; nodeName?: string },
): StoreAclResolver | undefined {
  if (!acl.enabled) return undefined;
  const resolver = new StoreAclResolver(parts.store, { datacenter: parts.datacenter, defaultPolicy: acl.defaultPolicy, timed: parts.timed, catchUp: () => parts.rpc.caughtUpWithLeader() });
  // The agent master token is this agent's own (acl/agent-master.ts); its value is read live.
  parts.rpc.setAclResolver(parts.nodeName === undefined ? resolver : withAgentMaster(resolver, parts.nodeName, () => acl.tokens.agentMaster));
  const apply = (cmd: Command) => parts.rpc.apply(cmd, { internal: true });
  parts.leaderDuties.add(new AclLeaderDuty(parts.store, apply, acl.tokens.initialManagement, parts.logger));
  return resolver;
}
