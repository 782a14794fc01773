// Issue #16: a follower that lost its log (a wiped disk; it restarts with the
// same id) is brought back by the leader, which otherwise would keep the match
// index the follower acknowledged before and never resend what it lost. The
// evidence is an answer to a message the leader stamped (Message.seq) after it
// recorded that match, reporting a last index below it; a stale answer — sent
// before the acknowledgement, then delayed, duplicated or reordered — may show
// the same short log and must change nothing. (Stories: testdata/lost-log.txt;
// under faults: test/sim/lost-log.test.ts.)
import type { Message } from '../../src/core/types';
import { TinyNet, data, newCore, text } from './tiny-net';

type AppendResp = Extract<Message, { type: 'appendResp' }>;
type HeartbeatResp = Extract<Message, { type: 'heartbeatResp' }>;

function progressOf(net: TinyNet, leader: string, id: string): { match: number; next: number } {
  return net.core(leader).status().progress![id];
}

/** Messages a node handed out in its Readies so far (what it sent, in order). */
function sentBy(net: TinyNet, id: string): Message[] {
  return net.node(id).readies.flatMap((rd) => rd.messages);
}

function appendsTo(net: TinyNet, leader: string, id: string): Message[] {
  if (!net.core(leader).hasReady()) return [];
  net.flush();
  const appends = net.queue.filter((m) => m.to === id && (m.type === 'append' || m.type === 'snapshot'));
  net.queue = [];
  return appends;
}

describe('a follower that lost its log (issue #16)', () => {
  it('ignores stale answers that show a shorter log than the follower has acknowledged since', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.isolate('n3');
    for (const word of ['a', 'b', 'c', 'd', 'e']) {
      net.core('n1').propose([data(word)]);
      net.settle();
    }
    net.heal();
    net.tick(1, ['n1']); // a heartbeat: n3's answer starts its catching up (a rejection, then a probe)
    const lastIndex = net.core('n1').lastIndex;
    expect(net.core('n3').lastIndex).toBe(lastIndex);
    expect(progressOf(net, 'n1', 'n3')).toEqual({ match: lastIndex, next: lastIndex + 1 });

    // What n3 said while it was behind, delivered again (late duplicates): each reports a log
    // shorter than the match it acknowledged afterwards.
    const stale = sentBy(net, 'n3').filter(
      (m): m is AppendResp | HeartbeatResp => (m.type === 'heartbeatResp' || (m.type === 'appendResp' && !m.success)) && m.lastIndex! < lastIndex,
    );
    expect(stale.map((m) => m.type).sort()).toEqual(['appendResp', 'heartbeatResp']);
    for (const m of stale) net.core('n1').step(m);
    expect(progressOf(net, 'n1', 'n3')).toEqual({ match: lastIndex, next: lastIndex + 1 });
    expect(appendsTo(net, 'n1', 'n3')).toEqual([]);
  });

  it('starts a follower whose fresh answer shows an empty log over from index 1, once per loss', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.core('n1').propose([data('a'), data('b'), data('c')]);
    net.settle();
    expect(progressOf(net, 'n1', 'n2')).toEqual({ match: 5, next: 6 });

    net.add(newCore('n2')); // n2's disk is wiped: it restarts with the same id and nothing else
    net.tick(1, ['n1']); // the heartbeat's answer (last=0, stamped after match=5 was recorded) is the evidence
    expect(net.core('n2').lastIndex).toBe(5);
    expect(net.node('n2').committed.map(text).slice(2)).toEqual(['a', 'b', 'c']);
    expect(progressOf(net, 'n1', 'n2')).toEqual({ match: 5, next: 6 });

    // The evidence, duplicated and arriving now, is stale: it does not start n2 over again.
    const evidence = sentBy(net, 'n2').find((m) => m.type === 'heartbeatResp' && m.lastIndex === 0)!;
    expect(evidence).toBeDefined();
    net.core('n1').step(evidence);
    expect(progressOf(net, 'n1', 'n2')).toEqual({ match: 5, next: 6 });
    expect(appendsTo(net, 'n1', 'n2')).toEqual([]);
  });

  it('recognises the loss from the rejection of an append too, and resends from the follower’s last index', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.core('n1').propose([data('a'), data('b')]);
    net.settle();
    net.add(newCore('n3'));
    net.core('n1').propose([data('c')]);
    net.settle();
    const reject = sentBy(net, 'n3').find((m): m is AppendResp => m.type === 'appendResp' && !m.success)!;
    expect(reject).toMatchObject({ matchIndex: 4, hint: 1, lastIndex: 0 });
    expect(net.core('n3').lastIndex).toBe(5);
    expect(net.node('n3').committed.map(text).slice(2)).toEqual(['a', 'b', 'c']);
    expect(progressOf(net, 'n1', 'n3')).toEqual({ match: 5, next: 6 });
  });

  it('never takes an answer without a stamp (a server that does not send one) for a lost log', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.core('n1').propose([data('a')]);
    net.settle();
    net.core('n1').step({ type: 'heartbeatResp', from: 'n2', to: 'n1', term: net.core('n1').term, lastIndex: 0 });
    net.core('n1').step({ type: 'appendResp', from: 'n2', to: 'n1', term: net.core('n1').term, success: false, matchIndex: 3, hint: 1, lastIndex: 0 });
    expect(progressOf(net, 'n1', 'n2')).toEqual({ match: 3, next: 4 });
  });
});
