// Promoting a learner once it has caught up: used by the leader when a joiner asks (join.ts
// `onJoin`) and by its autopilot pass (learner-autopilot.ts). The rule itself — the learner has
// acknowledged some of the log and is within 1,000 entries of the leader's — lives in one place,
// RaftNode.promote (raft node/membership.ts), which refuses a learner that has not caught up with
// NotCaughtUpError. Both callers go through promoteIfCaughtUp, so neither checks it on its own and
// the two can never disagree about what "caught up" means.
import { NotCaughtUpError, type RaftNode } from '@registry/raft';
import { monotonicMs } from '../time';

const POLL_MS = 50;

/**
 * Makes learner `id` a voter if it has caught up: true once it is a voter (also when it already
 * was), false when it has not caught up yet. Other refusals (not the leader, a change that did not
 * commit) are thrown.
 */
export async function promoteIfCaughtUp(raft: RaftNode, id: string): Promise<boolean> {
  return (await attempt(raft, id)) === null;
}

/**
 * Makes learner `id` a voter as soon as it has caught up, waiting up to `waitMs`; throws
 * NotCaughtUpError when it has not by then (a joiner then asks again, and the autopilot pass
 * promotes it meanwhile if it stops asking).
 */
export async function promoteWhenCaughtUp(raft: RaftNode, id: string, waitMs: number): Promise<void> {
  const deadline = monotonicMs() + waitMs;
  for (;;) {
    const notYet = await attempt(raft, id);
    if (!notYet) return;
    if (monotonicMs() >= deadline) throw notYet;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** One promotion attempt: null once `id` is a voter, RaftNode.promote's refusal while it has not caught up. */
async function attempt(raft: RaftNode, id: string): Promise<NotCaughtUpError | null> {
  if (isVoter(raft, id)) return null;
  try {
    await raft.promote(id);
    return null;
  } catch (err) {
    if (err instanceof NotCaughtUpError) return err;
    // Promoted meanwhile by the other caller (a joiner asking while the autopilot pass runs): done.
    if (isVoter(raft, id)) return null;
    throw err;
  }
}

function isVoter(raft: RaftNode, id: string): boolean {
  return raft.configuration().some((s) => s.id === id && !s.learner);
}
