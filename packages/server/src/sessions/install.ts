// Wires sessions into an agent: the leader's TTL timers (a LeaderDuty) and the renewer the HTTP
// routes use.
import type { Command, Store } from '@registry/store';
import type { LeaderDuties } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';
import type { RunnerFailures } from '../runtime/runner-failures';
import type { LeaderCalls } from '../rpc/leader-calls';
import { SessionTtl } from './session-ttl';

export function installSessions(deps: {
  store: Store;
  leaderCalls: LeaderCalls;
  apply: (cmd: Command) => Promise<unknown>;
  ttlMinMs: number;
  leaderDuties: LeaderDuties;
  logger: Logger;
  /** Where the TTL timers report their failures (runtime/runner-failures.ts). */
  failures: RunnerFailures;
}): SessionTtl {
  const ttl = new SessionTtl(deps.store, deps.leaderCalls, deps.apply, deps.ttlMinMs, deps.logger, deps.failures);
  deps.leaderDuties.add(ttl);
  return ttl;
}
