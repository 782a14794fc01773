// `registry leave` on a server: it is out of the cluster only once the leader has *committed* a
// configuration without it. A single "remove peer" call is not enough while leadership moves: the
// leader that proposed the removal may lose leadership before it commits (answer: leadership lost,
// outcome unknown), a new leader refuses configuration changes until its first entry commits, and
// once the removal is in a log the leaving server hears from no leader any more (the leader stops
// replicating to it), so it cannot even find the leader through Raft. So the leaving server retries
// one idempotent request — same request id every time — against every server it knew, until one
// leader answers that the committed configuration no longer holds it, or a bound passes; only then
// does it log "Graceful leave complete" (or say that it is incomplete, and why).
import { LeadershipLostError, NotLeaderError, type RaftNode, type Transport } from '@registry/raft';
import type { Logger } from '../runtime/logger';
import { serverError } from '../errors';
import { errorOf, type Envelope } from '../rpc/envelope';
import type { LeaderCalls } from '../rpc/leader-calls';
import { RequestIds } from '../rpc/request-ids';
import { monotonicMs } from '../time';

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    /**
     * Remove server `id`, which is leaving, and answer once a configuration without it is committed.
     * Idempotent: a server already absent only waits for that commit; `request` names one leave.
     */
    'Cluster.LeaveServer': { args: { id: string; request: string }; reply: { committedAt: number } };
  }
}

const METHOD = 'Cluster.LeaveServer';
/** How long a leader waits for its log (holding the removal) to commit before answering. */
const COMMIT_WAIT_MS = 5_000;
/** One attempt at one server: a removal commits in a round trip or two when the cluster is healthy. */
const ATTEMPT_TIMEOUT_MS = 6_000;
/** A leave retries for this long (elections take ~1–3 s; a few can follow one another) before it says it is incomplete. */
export const LEAVE_BOUND_MS = 25_000;
/** Completed leave requests a leader remembers, so a late duplicate is answered without touching the configuration. */
const REMEMBERED_REQUESTS = 64;

/** Serves Cluster.LeaveServer on whichever server leads. */
export function installLeaveServer(raft: RaftNode, leaderCalls: LeaderCalls, logger: Logger): void {
  const completed = new Map<string, number>();
  leaderCalls.handle(METHOD, async ({ id, request }) => {
    const earlier = completed.get(request);
    if (earlier !== undefined) return { committedAt: earlier };
    if (!raft.isLeader()) throw new NotLeaderError(raft.leader());
    const term = raft.term();
    if (raft.configuration().some((s) => s.id === id)) {
      logger.info({ server: id, request }, 'removing a leaving server from the configuration');
      try {
        await raft.removeServer(id);
      } catch (err) {
        // The removal may or may not commit under the next leader; the request is idempotent, so the
        // leaving server is told to find the leader and ask again rather than given a final error.
        if (err instanceof LeadershipLostError) throw new NotLeaderError(null);
        throw err;
      }
    }
    // Absent from this leader's latest configuration, whose entry is at or below its last index:
    // once everything up to there is committed in this term, no later leader can bring it back.
    const committedAt = raft.lastIndex();
    await appliedThrough(raft, committedAt, term);
    completed.set(request, committedAt);
    if (completed.size > REMEMBERED_REQUESTS) completed.delete(completed.keys().next().value as string);
    return { committedAt };
  });
}

/** Resolves once `raft` has applied `index` while still leading in `term`; rejects when that stops being possible. */
function appliedThrough(raft: RaftNode, index: number, term: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      // Applied means committed, which no change of leader undoes (a leader that removed itself
      // steps down right after this commit) — provided the entry applied at `index` is this term's:
      // had another leader replaced it, the index alone would say nothing about our removal.
      if (raft.appliedIndex() >= index) {
        const at = raft.termAt(index);
        if (at === term || (at === undefined && raft.isLeader() && raft.term() === term)) finish();
        else finish(new NotLeaderError(raft.leader()));
        return true;
      }
      if (!raft.isLeader() || raft.term() !== term) {
        finish(new NotLeaderError(raft.leader()));
        return true;
      }
      return false;
    };
    // One listener for both events: either may settle it.
    const onChange = (): void => void check();
    const timer = setTimeout(() => finish(serverError(`the configuration without the server was not committed within ${COMMIT_WAIT_MS} ms`)), COMMIT_WAIT_MS);
    const finish = (err?: Error): void => {
      clearTimeout(timer);
      raft.off('applied', onChange);
      raft.off('role', onChange);
      if (err) reject(err);
      else resolve();
    };
    raft.on('applied', onChange);
    raft.on('role', onChange);
    check();
  });
}

export type LeaveOutcome = { complete: true; attempts: number; committedAt: number } | { complete: false; attempts: number; reason: string };

export interface GracefulLeaveDeps {
  self: { id: string; address: string };
  raft: RaftNode;
  transport: Transport;
  logger: Logger;
  /**
   * Servers to ask besides those of this server's own configuration: a server that has not yet
   * received the log (it is still catching up, or its cluster has just formed around it) holds no
   * configuration at all, while the leader's already names it.
   */
  alsoAsk?: string[];
  boundMs?: number;
}

/** The leaving server's side: take this server out of the committed configuration, retrying through leadership changes. */
export async function leaveCluster(d: GracefulLeaveDeps): Promise<LeaveOutcome> {
  const boundMs = d.boundMs ?? LEAVE_BOUND_MS;
  const args = { id: d.self.id, request: new RequestIds().next() };
  // Captured now: once the removal is in the leader's log nobody replicates to us, and our own view
  // of the configuration and of the leader goes stale.
  const peers = [...new Set([...d.raft.configuration().filter((s) => s.id !== d.self.id).map((s) => s.address), ...(d.alsoAsk ?? [])])].filter((a) => a !== d.self.address);
  const deadline = monotonicMs() + boundMs;
  if (d.raft.isLeader()) {
    // A leader removing itself stops leading mid-change; handing over first keeps the cluster writable.
    await d.raft.transferLeadership(undefined, 5_000).catch((err: Error) => d.logger.warn({ err: err.message }, 'graceful leave: leadership transfer failed; removing this server as leader'));
  }
  let attempts = 0;
  let lastError = 'no server was asked';
  while (monotonicMs() < deadline) {
    attempts++;
    try {
      const { committedAt } = await askLeader(d, args, peers, deadline);
      d.logger.info({ request: args.request, attempts, committedAt }, 'Graceful leave complete');
      return { complete: true, attempts, committedAt };
    } catch (err) {
      lastError = (err as Error).message;
      d.logger.info({ request: args.request, attempt: attempts, err: lastError }, 'graceful leave: removal not confirmed yet, retrying');
    }
    await new Promise((r) => setTimeout(r, Math.min(200 * attempts, 1_000, Math.max(0, deadline - monotonicMs()))));
  }
  const reason = `the cluster did not confirm this server's removal within ${Math.round(boundMs / 1000)} s after ${attempts} attempts (last: ${lastError})`;
  d.logger.warn({ request: args.request, attempts }, `Graceful leave incomplete: ${reason}`);
  return { complete: false, attempts, reason };
}

/**
 * One round: this server when it leads, the leader it last knew, then every server it knew, until
 * one of them is the leader and answers; "not the leader" moves on to the next. Even this server
 * is asked over the transport: LeaderCalls.call would, on losing leadership, wait for a leader that
 * a server being removed never hears of again.
 */
async function askLeader(
  d: GracefulLeaveDeps, args: { id: string; request: string }, peers: string[], deadline: number,
): Promise<{ committedAt: number }> {
  const known = d.raft.leader()?.address;
  const order = [...new Set([...(d.raft.isLeader() ? [d.self.address] : []), ...(known ? [known] : []), ...peers])];
  let failure = 'no server answered as the leader';
  for (const address of order) {
    // Unreachable servers time out rather than refuse: never wait past the leave's bound.
    const timeoutMs = Math.min(ATTEMPT_TIMEOUT_MS, deadline - monotonicMs());
    if (timeoutMs <= 0) break;
    let env: Envelope<{ committedAt: number }>;
    try {
      env = (await d.transport.call(address, METHOD, args, timeoutMs)) as Envelope<{ committedAt: number }>;
    } catch (err) {
      failure = `${address}: ${(err as Error).message}`;
      continue;
    }
    if (env.ok) return env.value;
    if ('retry' in env) continue;
    failure = `${address}: ${errorOf(env).message}`;
  }
  throw serverError(failure);
}
