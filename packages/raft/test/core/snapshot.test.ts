// Log compaction and InstallSnapshot (Raft §7).
import { EntryType } from '../../src/core/types';
import { TinyNet, configOf, data, newCore } from './tiny-net';

function laggingFollowerAfterCompaction(): TinyNet {
  const net = TinyNet.bootstrapped(3);
  net.elect('n1');
  net.isolate('n3');
  for (let i = 0; i < 5; i++) {
    net.core('n1').propose([data(`e${i}`)]);
    net.settle();
  }
  const leader = net.core('n1');
  expect(leader.appliedIndex).toBe(7);
  leader.compact(leader.snapshotMeta(6)!, 5); // snapshot at 6, keep entries 6..7
  return net;
}

describe('§7 log compaction and snapshots', () => {
  it('a leader sends its snapshot (meta only) to a follower that needs compacted entries', () => {
    const net = laggingFollowerAfterCompaction();
    net.heal();
    net.core('n1').tick();
    net.flush();
    net.settle();
    expect(net.node('n3').snapshots).toEqual([{ index: 6, term: 2, configuration: configOf('n1', 'n2', 'n3') }]);
    // Then the entries after the snapshot are replicated as usual.
    expect(net.core('n3').lastIndex).toBe(7);
    expect(net.node('n3').committed.map((e) => e.index)).toEqual([1, 2, 7]);
  });

  it('the follower installs a newer snapshot: hands it to the driver with its data, resets its log and acknowledges its index', () => {
    const follower = newCore('n3');
    follower.bootstrap(configOf('n1', 'n2', 'n3'));
    follower.advance(follower.ready());
    const meta = { index: 40, term: 3, configuration: configOf('n1', 'n2', 'n3', 'n4') };
    follower.step({ type: 'snapshot', from: 'n1', to: 'n3', term: 3, meta, data: data('state') });
    const rd = follower.ready();
    expect(rd.snapshot?.meta).toEqual(meta);
    expect(new TextDecoder().decode(rd.snapshot!.data)).toBe('state');
    expect(rd.messages).toEqual([{ type: 'appendResp', from: 'n3', to: 'n1', term: 3, success: true, matchIndex: 40, hint: 0, lastIndex: 40 }]);
    expect(follower.lastIndex).toBe(40);
    expect(follower.commitIndex).toBe(40);
    expect(follower.configuration).toEqual(meta.configuration);
    follower.advance(rd);
    expect(follower.appliedIndex).toBe(40);
  });

  it('a snapshot the follower already holds in its log only moves its commit index', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.drop = (m) => m.type === 'heartbeat';
    net.core('n1').propose([data('x')]);
    net.settle();
    const follower = net.core('n2');
    const meta = net.core('n1').snapshotMeta(3)!;
    follower.step({ type: 'snapshot', from: 'n1', to: 'n2', term: 2, meta });
    const rd = follower.ready();
    expect(rd.snapshot).toBeUndefined();
    expect(follower.commitIndex).toBe(3);
  });

  it('a server restarts from a snapshot plus the entries after it', () => {
    const net = laggingFollowerAfterCompaction();
    const restore = {
      hardState: net.node('n1').hardState,
      snapshot: net.core('n1').snapshotMeta(6)!,
      entries: net.node('n1').log.filter((e) => e.index > 5),
    };
    const restarted = newCore('n1', {}, restore);
    expect(restarted.lastIndex).toBe(7);
    expect(restarted.commitIndex).toBe(7);
    expect(restarted.appliedIndex).toBe(6);
    expect(restarted.configuration).toEqual(configOf('n1', 'n2', 'n3'));
    const rd = restarted.ready();
    expect(rd.committed.map((e) => [e.index, e.type])).toEqual([[7, EntryType.Normal]]);
  });

  it('a follower whose snapshot was lost is sent it again after an election timeout', () => {
    const net = laggingFollowerAfterCompaction();
    net.drop = (m) => m.type === 'snapshot' || ((m.from === 'n3' || m.to === 'n3') && m.type !== 'heartbeat' && m.type !== 'heartbeatResp');
    net.tick(3, ['n1']);
    net.heal();
    net.tick(12, ['n1']);
    expect(net.node('n3').snapshots.map((m) => m.index)).toEqual([6]);
  });
});
