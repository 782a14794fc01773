// A server kept out of elections (RaftCore.setElectionsAllowed(false), issue #16: it started
// without the state it may have had) neither votes nor campaigns, yet still follows a leader.
import { ELECTION, TinyNet, data } from './tiny-net';

describe('a server kept out of elections', () => {
  it('drops vote and pre-vote requests unanswered, without taking their term', () => {
    const net = TinyNet.bootstrapped(3, { preVote: false });
    const gated = net.core('n3');
    gated.setElectionsAllowed(false);
    gated.step({ type: 'vote', from: 'n1', to: 'n3', term: 5, lastIndex: 1, lastTerm: 1 });
    gated.step({ type: 'prevote', from: 'n2', to: 'n3', term: 6, lastIndex: 1, lastTerm: 1 });
    const rd = gated.ready();
    expect(rd.messages).toEqual([]);
    expect(gated.term).toBe(1);
  });

  it('never campaigns, nor obeys timeoutNow', () => {
    const net = TinyNet.bootstrapped(3);
    net.core('n1').setElectionsAllowed(false);
    net.tick(3 * ELECTION, ['n1']);
    expect(net.core('n1').role).toBe('follower');
    net.core('n1').step({ type: 'timeoutNow', from: 'n2', to: 'n1', term: 1 });
    expect(net.core('n1').role).toBe('follower');
    expect(net.core('n1').inElections).toBe(false);
  });

  it('still follows the leader and acknowledges its entries, and votes again once let back in', () => {
    const net = TinyNet.bootstrapped(3);
    net.core('n3').setElectionsAllowed(false);
    net.elect('n1');
    net.core('n1').propose([data('x')]);
    net.settle();
    expect(net.core('n3').leader).toBe('n1');
    expect(net.core('n3').commitIndex).toBe(net.core('n1').commitIndex);

    // With n1 gone, n2 cannot be elected while n3 stays out (no vote from it)…
    net.isolate('n1');
    net.tick(4 * ELECTION, ['n2', 'n3']);
    expect(net.core('n2').role).not.toBe('leader');
    expect(net.core('n3').role).toBe('follower');
    // …and is, once n3 is let back in.
    net.core('n3').setElectionsAllowed(true);
    net.tick(2 * ELECTION, ['n3']);
    expect(net.core('n3').role).toBe('leader');
  });
});
