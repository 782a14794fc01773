// Raft §5.2 (leader election) and §5.4.1 (election restriction).
import { EntryType } from '../../src/core/types';
import { ELECTION, TinyNet, configOf, newCore } from './tiny-net';

describe('§5.2 leader election', () => {
  it('a follower that hears nothing for an election timeout is elected by a majority, one term up', () => {
    const net = TinyNet.bootstrapped(3);
    expect(net.core('n1').term).toBe(1);
    net.tick(ELECTION, ['n1']);
    expect(net.core('n1').role).toBe('leader');
    expect(net.core('n1').term).toBe(2);
    expect(net.core('n2').leader).toBe('n1');
    expect(net.core('n3').leader).toBe('n1');
  });

  it('randomises the election timeout within [electionTicks, 2*electionTicks)', () => {
    for (const [random, ticks] of [
      [0, ELECTION],
      [0.999, 2 * ELECTION - 1],
    ] as const) {
      const core = newCore('n1', { random: () => random, preVote: false });
      core.bootstrap(configOf('n1', 'n2', 'n3'));
      for (let i = 1; i < ticks; i++) core.tick();
      expect(core.role).toBe('follower');
      core.tick();
      expect(core.role).toBe('candidate');
    }
  });

  it('a new leader appends a no-op of its term at once and becomes ready when it commits', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    const leader = net.core('n1');
    expect(net.node('n1').log.map((e) => [e.index, e.term, e.type])).toEqual([
      [1, 1, EntryType.Config],
      [2, 2, EntryType.Noop],
    ]);
    expect(leader.commitIndex).toBe(2);
    expect(leader.leaderReady).toBe(true);
  });

  it('grants at most one vote per term, and persists the vote in the same Ready as the answer', () => {
    const net = TinyNet.bootstrapped(3, { preVote: false });
    const voter = net.core('n3');
    voter.step({ type: 'vote', from: 'n1', to: 'n3', term: 5, lastIndex: 1, lastTerm: 1 });
    voter.step({ type: 'vote', from: 'n2', to: 'n3', term: 5, lastIndex: 1, lastTerm: 1 });
    const rd = voter.ready();
    expect(rd.hardState).toEqual({ term: 5, vote: 'n1', commit: 0 });
    expect(rd.messages).toEqual([
      { type: 'voteResp', from: 'n3', to: 'n1', term: 5, granted: true },
      { type: 'voteResp', from: 'n3', to: 'n2', term: 5, granted: false },
    ]);
  });

  it('a candidate that hears from a leader of its term becomes its follower', () => {
    const net = TinyNet.bootstrapped(3, { preVote: false });
    net.isolate('n2');
    net.core('n2').campaign();
    net.settle();
    expect(net.core('n2').role).toBe('candidate');
    const term = net.core('n2').term;
    net.core('n2').step({ type: 'heartbeat', from: 'n3', to: 'n2', term, commit: 0 });
    expect(net.core('n2').role).toBe('follower');
    expect(net.core('n2').leader).toBe('n3');
  });

  it('any message of a higher term turns a leader into a follower of that term', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    const leader = net.core('n1');
    leader.step({ type: 'appendResp', from: 'n2', to: 'n1', term: leader.term + 3, success: false, matchIndex: 0, hint: 0 });
    expect(leader.role).toBe('follower');
    expect(leader.term).toBe(5);
  });

  it('a server that is not in the configuration never campaigns', () => {
    const net = TinyNet.bootstrapped(3, {}, 2); // n3 is not a member
    net.tick(5 * ELECTION, ['n3']);
    expect(net.core('n3').role).toBe('follower');
    expect(net.core('n3').term).toBe(0);
    net.core('n3').campaign();
    expect(net.core('n3').role).toBe('follower');
  });

  it('a single-server cluster elects itself and commits on its own', () => {
    const net = TinyNet.bootstrapped(1);
    net.tick(ELECTION);
    expect(net.core('n1').role).toBe('leader');
    expect(net.core('n1').leaderReady).toBe(true);
    expect(net.node('n1').committed.map((e) => e.index)).toEqual([1, 2]);
  });
});

describe('§5.4.1 election restriction', () => {
  it('a voter refuses a candidate whose log is less up to date', () => {
    const net = TinyNet.bootstrapped(3, { preVote: false, checkQuorum: false }); // no leader stickiness
    net.elect('n1');
    net.core('n1').propose([new Uint8Array([1])]);
    net.settle();
    const voter = net.core('n2');
    const term = voter.term + 1;
    voter.step({ type: 'vote', from: 'n3', to: 'n2', term, lastIndex: 2, lastTerm: 2 }); // lacks entry 3
    const rd = voter.ready();
    expect(rd.messages).toContainEqual({ type: 'voteResp', from: 'n2', to: 'n3', term, granted: false });
  });

  it('a voter grants a candidate with a higher last term even if its log is shorter', () => {
    const voter = newCore('n2', { preVote: false }, {
      hardState: { term: 2, vote: null, commit: 0 },
      entries: [
        { index: 1, term: 1, type: EntryType.Normal, data: new Uint8Array() },
        { index: 2, term: 1, type: EntryType.Normal, data: new Uint8Array() },
      ],
    });
    voter.step({ type: 'vote', from: 'n3', to: 'n2', term: 3, lastIndex: 1, lastTerm: 2 });
    expect(voter.ready().messages).toContainEqual({ type: 'voteResp', from: 'n2', to: 'n3', term: 3, granted: true });
  });
});
