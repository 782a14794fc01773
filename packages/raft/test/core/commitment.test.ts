// Raft §5.4.2 (committing entries from previous terms) and the rule that a
// leader's own log write counts toward the quorum only once it is persisted.
import { EntryType, type Entry } from '../../src/core/types';
import { encodeConfiguration } from '../../src/core/configuration';
import { TinyNet, configOf, data, newCore } from './tiny-net';

const config: Entry = { index: 1, term: 1, type: EntryType.Config, data: encodeConfiguration(configOf('n1', 'n2', 'n3')) };
const old: Entry = { index: 2, term: 2, type: EntryType.Normal, data: data('from term 2') };

describe('§5.4.2 commitment rule', () => {
  it('does not commit an entry of an earlier term by counting replicas, only together with one of its own term', () => {
    // Figure 8: n1 led term 2 and wrote entry 2 only locally. Now it leads term 4 (its log
    // is the most up to date in the vote) and n2 acknowledges entry 2 before the no-op.
    const leader = newCore('n1', { preVote: false }, { hardState: { term: 3, vote: null, commit: 1 }, entries: [config, old] });
    leader.campaign();
    leader.step({ type: 'voteResp', from: 'n2', to: 'n1', term: 4, granted: true });
    expect(leader.role).toBe('leader');
    const rd = leader.ready();
    leader.advance(rd);
    expect(rd.entries.map((e) => [e.index, e.term])).toEqual([[3, 4]]);
    // A majority (n1, n2) holds entry 2, yet it is of term 2: not committed.
    leader.step({ type: 'appendResp', from: 'n2', to: 'n1', term: 4, success: true, matchIndex: 2, hint: 0 });
    expect(leader.commitIndex).toBe(1);
    expect(leader.leaderReady).toBe(false);
    // Once the no-op of term 4 is on a majority, both are committed.
    leader.step({ type: 'appendResp', from: 'n2', to: 'n1', term: 4, success: true, matchIndex: 3, hint: 0 });
    expect(leader.commitIndex).toBe(3);
    expect(leader.leaderReady).toBe(true);
  });

  it("counts the leader's own entries toward the quorum only after the driver persisted them", () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    const leader = net.core('n1');
    leader.propose([data('x')]);
    const rd = leader.ready(); // entry 3 handed out, not yet persisted
    leader.step({ type: 'appendResp', from: 'n2', to: 'n1', term: 2, success: true, matchIndex: 3, hint: 0 });
    expect(leader.commitIndex).toBe(2); // n2 alone is not a majority of three
    leader.advance(rd);
    expect(leader.commitIndex).toBe(3);
  });

  it('commits with a quorum of followers even before its own write finishes', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    const leader = net.core('n1');
    leader.propose([data('x')]);
    leader.ready();
    leader.step({ type: 'appendResp', from: 'n2', to: 'n1', term: 2, success: true, matchIndex: 3, hint: 0 });
    leader.step({ type: 'appendResp', from: 'n3', to: 'n1', term: 2, success: true, matchIndex: 3, hint: 0 });
    expect(leader.commitIndex).toBe(3);
  });

  it('a follower never commits beyond what it has verified to match the leader', () => {
    const follower = newCore('n2', {}, { hardState: { term: 2, vote: null, commit: 1 }, entries: [config, old] });
    // The leader's commit index is 5, but this append only proves entries up to 1.
    follower.step({ type: 'append', from: 'n1', to: 'n2', term: 3, prevIndex: 1, prevTerm: 1, commit: 5, entries: [] });
    expect(follower.commitIndex).toBe(1);
  });
});
