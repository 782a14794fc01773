// Raft thesis §9.6 (pre-vote) and leader stickiness.
import { ELECTION, TinyNet } from './tiny-net';

describe('§9.6 pre-vote', () => {
  it('a partitioned server keeps its term while it cannot win, and does not depose the leader when it returns', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    const term = net.core('n1').term;
    net.isolate('n3');
    net.tick(10 * ELECTION);
    expect(net.core('n3').role).toBe('pre-candidate');
    expect(net.core('n3').term).toBe(term);
    net.heal();
    net.tick(ELECTION);
    expect(net.core('n1').role).toBe('leader');
    expect(net.core('n1').term).toBe(term);
    expect(net.core('n3').leader).toBe('n1');
  });

  it('a pre-vote is refused by a server that heard from a leader within the election timeout', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    const follower = net.core('n2');
    follower.step({ type: 'prevote', from: 'n3', to: 'n2', term: follower.term + 1, lastIndex: 10, lastTerm: 10 });
    expect(follower.hasReady()).toBe(false); // ignored
  });

  it('a pre-vote is granted without changing the voter’s term once the leader is silent', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.isolate('n1');
    net.tick(ELECTION, ['n2']);
    const voter = net.core('n2');
    const term = voter.term;
    voter.step({ type: 'prevote', from: 'n3', to: 'n2', term: term + 1, lastIndex: 10, lastTerm: term });
    const rd = voter.ready();
    expect(rd.messages).toContainEqual({ type: 'prevoteResp', from: 'n2', to: 'n3', term: term + 1, granted: true });
    expect(voter.term).toBe(term);
    expect(rd.hardState?.vote ?? null).toBeNull();
  });

  it('a pre-candidate that wins the pre-vote then campaigns for real and wins', () => {
    const net = TinyNet.bootstrapped(3, (id) => ({ random: () => (id === 'n3' ? 0.5 : 0) })); // n2 times out first
    net.elect('n1');
    const term = net.core('n1').term;
    net.isolate('n1');
    net.tick(2 * ELECTION, ['n2', 'n3']);
    expect(net.core('n2').role).toBe('leader');
    expect(net.core('n2').term).toBe(term + 1);
    expect(net.core('n3').leader).toBe('n2');
  });
});
