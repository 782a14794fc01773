// Leadership transfer (Raft thesis §3.10).
import { ELECTION, TinyNet, data } from './tiny-net';

describe('§3.10 leadership transfer', () => {
  it('hands leadership to an up-to-date follower, which wins the next term at once', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    const term = net.core('n1').term;
    net.core('n1').transferLeadership('n2');
    net.settle();
    expect(net.core('n2').role).toBe('leader');
    expect(net.core('n2').term).toBe(term + 1);
    expect(net.core('n1').role).toBe('follower');
  });

  it('catches a lagging target up before sending timeoutNow', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.isolate('n3');
    net.core('n1').propose([data('a'), data('b')]);
    net.settle();
    net.heal();
    net.core('n1').transferLeadership('n3');
    net.flush();
    expect(net.messagesOf('timeoutNow')).toEqual([]);
    net.tick(2, ['n1']); // heartbeat answers reveal what n3 lacks
    expect(net.core('n3').role).toBe('leader');
    expect(net.core('n3').lastIndex).toBeGreaterThanOrEqual(4);
  });

  it('picks the most up-to-date follower when no target is named', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.isolate('n2');
    net.core('n1').propose([data('a')]);
    net.settle();
    net.heal();
    net.core('n1').transferLeadership();
    net.settle();
    expect(net.core('n3').role).toBe('leader');
  });

  it('refuses proposals while transferring, and gives up after an election timeout', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.drop = (m) => m.type === 'timeoutNow';
    net.core('n1').transferLeadership('n2');
    net.settle();
    expect(net.core('n1').propose([data('x')])).toBeNull();
    expect(net.core('n1').proposeConfChange({ type: 'remove', server: { id: 'n3', address: 'addr-n3' } })).toBeNull();
    net.tick(ELECTION, ['n1']);
    expect(net.core('n1').role).toBe('leader');
    expect(net.core('n1').propose([data('x')])).not.toBeNull();
  });

  it('a timeoutNow makes a follower campaign without pre-vote, past leader stickiness', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    const term = net.core('n1').term;
    net.core('n3').step({ type: 'timeoutNow', from: 'n1', to: 'n3', term });
    expect(net.core('n3').role).toBe('candidate');
    const votes = net.core('n3').ready().messages;
    expect(votes.every((m) => m.type === 'vote' && m.transfer === true && m.term === term + 1)).toBe(true);
  });
});
