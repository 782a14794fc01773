// `force-leave <server>` on the leader: the server leaves the Raft configuration and its catalog
// node is marked left (server-health.ts forceLeave), so that the leader's reconciliation does not
// add it back (readmission.ts) — even when it is alive, or comes back later. It returns through
// `join`, from either side (issue #35: `leave` and `force-leave` are the ways to keep a server out).
import type { LeaderCalls } from '../rpc/leader-calls';
import type { ServerHealth } from './server-health';

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    'Cluster.ForceLeaveServer': { args: { id: string }; reply: boolean };
  }
}

export function installForceLeave(calls: LeaderCalls, health: ServerHealth): void {
  calls.handle('Cluster.ForceLeaveServer', async ({ id }) => {
    await health.forceLeave(id);
    return true;
  });
}
