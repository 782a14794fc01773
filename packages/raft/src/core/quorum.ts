// Majority arithmetic over one configuration's voters (no joint consensus:
// membership changes one server at a time, Raft thesis §4.1).
import type { NodeId } from './types';

export function quorumSize(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

/**
 * Reused by quorumIndex, which runs on every acknowledgement a leader receives: a fresh array and
 * Array.prototype.sort each time were ~3 KB of garbage per write at one client (issue #30).
 */
const descending: number[] = [];

/** The highest index that a majority of `voters` has reached; 0 with no voters. */
export function quorumIndex(voters: readonly NodeId[], indexOf: (id: NodeId) => number): number {
  const n = voters.length;
  if (n === 0) return 0;
  // Insertion sort, highest first: a handful of voters.
  for (let i = 0; i < n; i++) {
    const index = indexOf(voters[i]);
    let j = i;
    for (; j > 0 && descending[j - 1] < index; j--) descending[j] = descending[j - 1];
    descending[j] = index;
  }
  return descending[quorumSize(n) - 1];
}

export type VoteOutcome = 'won' | 'lost' | 'pending';

export function voteOutcome(voters: readonly NodeId[], votes: ReadonlyMap<NodeId, boolean>): VoteOutcome {
  if (voters.length === 0) return 'lost';
  let granted = 0;
  let rejected = 0;
  for (const id of voters) {
    const vote = votes.get(id);
    if (vote === true) granted++;
    else if (vote === false) rejected++;
  }
  const needed = quorumSize(voters.length);
  if (granted >= needed) return 'won';
  if (voters.length - rejected < needed) return 'lost';
  return 'pending';
}

export function hasQuorum(voters: readonly NodeId[], agrees: (id: NodeId) => boolean): boolean {
  if (voters.length === 0) return false;
  return voters.filter(agrees).length >= quorumSize(voters.length);
}
