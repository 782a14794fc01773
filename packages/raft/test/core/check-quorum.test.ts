// Check-quorum (leader step-down) and leader stickiness (Raft thesis §6.2, §9.6).
import { ELECTION, TinyNet } from './tiny-net';

describe('check-quorum', () => {
  it('a leader that cannot hear from a quorum steps down within two election timeouts', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.isolate('n1');
    net.tick(2 * ELECTION, ['n1']);
    expect(net.core('n1').role).toBe('follower');
    expect(net.core('n1').leader).toBeNull();
  });

  it('a leader that hears from a quorum stays leader', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.isolate('n3');
    net.tick(5 * ELECTION, ['n1', 'n2']);
    expect(net.core('n1').role).toBe('leader');
  });

  it('a follower that heard from its leader recently ignores a vote request of a higher term', () => {
    const net = TinyNet.bootstrapped(3, { preVote: false });
    net.elect('n1');
    const follower = net.core('n2');
    const term = follower.term;
    follower.step({ type: 'vote', from: 'n3', to: 'n2', term: term + 1, lastIndex: 99, lastTerm: 99 });
    expect(follower.term).toBe(term);
    expect(follower.hasReady()).toBe(false);
  });

  it('a transfer vote (after timeoutNow) is not ignored', () => {
    const net = TinyNet.bootstrapped(3, { preVote: false });
    net.elect('n1');
    const follower = net.core('n2');
    const term = follower.term;
    follower.step({ type: 'vote', from: 'n3', to: 'n2', term: term + 1, lastIndex: 99, lastTerm: 99, transfer: true });
    expect(follower.term).toBe(term + 1);
    expect(follower.ready().messages).toContainEqual({ type: 'voteResp', from: 'n2', to: 'n3', term: term + 1, granted: true });
  });

  it('ticksSinceLeaderContact counts from the last message of the leader', () => {
    const net = TinyNet.bootstrapped(3, { heartbeatTicks: 5 });
    expect(net.core('n2').ticksSinceLeaderContact).toBe(Number.POSITIVE_INFINITY);
    net.elect('n1');
    expect(net.core('n1').ticksSinceLeaderContact).toBe(0);
    expect(net.core('n2').ticksSinceLeaderContact).toBe(0);
    net.tick(3, ['n2']);
    expect(net.core('n2').ticksSinceLeaderContact).toBe(3);
  });
});
