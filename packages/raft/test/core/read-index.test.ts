// Linearizable reads without writing the log: ReadIndex (Raft thesis §6.4).
import { ELECTION, TinyNet, data } from './tiny-net';

describe('§6.4 ReadIndex', () => {
  it('a leader answers with its commit index once a quorum confirms a heartbeat round', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.core('n1').propose([data('x')]);
    net.settle();
    net.core('n1').readIndex(7);
    net.flush();
    expect(net.node('n1').readStates).toEqual([]); // not before the round
    const round = net.messagesOf('heartbeat');
    expect(round.map((m) => m.to).sort()).toEqual(['n2', 'n3']);
    expect(round.every((m) => m.type === 'heartbeat' && m.ctx !== undefined)).toBe(true);
    net.settle();
    expect(net.node('n1').readStates).toEqual([{ ctx: 7, index: 3 }]);
  });

  it('many reads between two Readies share one heartbeat round', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    for (let ctx = 1; ctx <= 20; ctx++) net.core('n1').readIndex(ctx);
    net.flush();
    expect(net.messagesOf('heartbeat')).toHaveLength(2);
    net.settle();
    expect(net.node('n1').readStates.map((r) => r.ctx)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('a leader that has not committed an entry of its term yet refuses reads', () => {
    const net = TinyNet.bootstrapped(3);
    net.isolate('n1');
    net.core('n1').campaign();
    net.settle();
    net.heal();
    net.core('n1').step({ type: 'voteResp', from: 'n2', to: 'n1', term: net.core('n1').term, granted: true });
    expect(net.core('n1').role).toBe('leader');
    expect(net.core('n1').leaderReady).toBe(false);
    net.core('n1').readIndex(1);
    net.flush();
    expect(net.node('n1').failedReads).toEqual([1]);
  });

  it('a single-server cluster answers at once', () => {
    const net = TinyNet.bootstrapped(1);
    net.tick(ELECTION);
    net.core('n1').readIndex(5);
    net.flush();
    expect(net.node('n1').readStates).toEqual([{ ctx: 5, index: 2 }]);
  });

  it('a follower forwards the read to the leader and gets the leader’s commit index back', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.core('n2').readIndex(9);
    net.settle();
    expect(net.node('n2').readStates).toEqual([{ ctx: 9, index: 2 }]);
  });

  it('a follower with no leader fails the read at once', () => {
    const net = TinyNet.bootstrapped(3);
    net.core('n2').readIndex(4);
    net.flush();
    expect(net.node('n2').failedReads).toEqual([4]);
  });

  it('a leader that steps down fails its pending reads, its own and forwarded ones', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.drop = (m) => m.type === 'heartbeatResp';
    net.core('n1').readIndex(1);
    net.core('n2').readIndex(2);
    net.settle();
    net.core('n1').step({ type: 'appendResp', from: 'n3', to: 'n1', term: net.core('n1').term + 1, success: false, matchIndex: 0, hint: 0 });
    net.settle();
    expect(net.node('n1').failedReads).toEqual([1]);
    expect(net.node('n2').failedReads).toEqual([2]);
  });

  it('a read forwarded to a leader that never answers fails after two election timeouts', () => {
    const net = TinyNet.bootstrapped(3, { heartbeatTicks: 1 });
    net.elect('n1');
    net.drop = (m) => m.type === 'readIndex';
    net.core('n2').readIndex(3);
    net.tick(2 * ELECTION);
    expect(net.node('n2').failedReads).toEqual([3]);
  });
});
