// Wires sessions into an agent: the leader's TTL timers (a LeaderDuty) and the renewer the HTTP
// routes use.
import type { RaftNode, Transport } from '@registry/raft';
import type { Command, Store } from '@registry/store';
import type { LeaderDuties } from '../agent/leader-duties';
import type { Logger } from '../agent/logger';
import { SessionTtl } from './session-ttl';

export function installSessions(deps: {
  store: Store;
  raft: RaftNode;
  transport: Transport;
  apply: (cmd: Command) => Promise<unknown>;
  ttlMinMs: number;
  leaderDuties: LeaderDuties;
  logger: Logger;
}): SessionTtl {
  const ttl = new SessionTtl(deps.store, deps.raft, deps.transport, deps.apply, deps.ttlMinMs, deps.logger);
  deps.leaderDuties.add(ttl);
  return ttl;
}
