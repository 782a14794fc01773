// Raft §5.3 (log replication), with etcd-style flow control: batching,
// pipelining (optimistic next index, bounded in-flight appends) and probing.
import { EntryType, type Message } from '../../src/core/types';
import { TinyNet, data, newCore, text } from './tiny-net';

type Append = Extract<Message, { type: 'append' }>;

/** `label` padded with dots to `size` bytes. */
function bytes(size: number, label: string): Uint8Array {
  return data(label.padEnd(size, '.'));
}

describe('§5.3 log replication', () => {
  it('replicates proposals to every follower and hands each committed entry out once, in order, Noop and Config included', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    const positions = net.core('n1').propose([data('a'), data('b')]);
    expect(positions).toEqual([
      { index: 3, term: 2 },
      { index: 4, term: 2 },
    ]);
    net.tick(2);
    for (const id of ['n1', 'n2', 'n3']) {
      const committed = net.node(id).committed;
      expect(committed.map((e) => [e.index, e.type])).toEqual([
        [1, EntryType.Config],
        [2, EntryType.Noop],
        [3, EntryType.Normal],
        [4, EntryType.Normal],
      ]);
      expect(committed.slice(2).map(text)).toEqual(['a', 'b']);
    }
  });

  it('refuses proposals on a follower', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    expect(net.core('n2').propose([data('x')])).toBeNull();
  });

  it('batches proposals made between two Readies into one append per follower', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    for (let i = 0; i < 10; i++) net.core('n1').propose([data(`p${i}`)]);
    const appends = net.core('n1').ready().messages.filter((m): m is Append => m.type === 'append');
    expect(appends.map((m) => [m.to, m.entries.length])).toEqual([
      ['n2', 10],
      ['n3', 10],
    ]);
  });

  it('answers an append in the same Ready that holds the appended entries (persist before acknowledging)', () => {
    const follower = newCore('n2');
    follower.step({ type: 'append', from: 'n1', to: 'n2', term: 1, prevIndex: 0, prevTerm: 0, commit: 0, entries: [{ index: 1, term: 1, type: EntryType.Normal, data: data('x') }] });
    const rd = follower.ready();
    expect(rd.entries.map((e) => e.index)).toEqual([1]);
    expect(rd.messages).toEqual([{ type: 'appendResp', from: 'n2', to: 'n1', term: 1, success: true, matchIndex: 1, hint: 0, lastIndex: 1 }]);
  });

  it('pipelines up to maxInflight appends without waiting, then waits for acknowledgements', () => {
    const net = TinyNet.bootstrapped(2, { maxInflight: 2, maxEntriesPerAppend: 1 });
    net.elect('n1');
    net.core('n1').propose([data('a'), data('b'), data('c'), data('d')]);
    net.flush();
    const sent = net.queue.filter((m): m is Append => m.type === 'append');
    expect(sent.map((m) => m.entries.map((e) => e.index))).toEqual([[3], [4]]);
    net.settle();
    expect(net.core('n2').lastIndex).toBe(6);
    expect(net.core('n1').commitIndex).toBe(6);
  });

  it('cuts appends at maxAppendBytes of payload; an entry larger than that goes alone', () => {
    const net = TinyNet.bootstrapped(2, { maxAppendBytes: 250, maxEntriesPerAppend: 512 });
    net.elect('n1');
    net.core('n1').propose([bytes(100, 'a'), bytes(100, 'b'), bytes(100, 'c'), bytes(600, 'd'), bytes(10, 'e')]);
    net.flush();
    const sent = net.queue.filter((m): m is Append => m.type === 'append');
    expect(sent.map((m) => m.entries.map((e) => e.data.byteLength))).toEqual([[100, 100], [100], [600], [10]]);
    net.settle();
    expect(net.core('n2').lastIndex).toBe(7);
  });

  it('holds a follower far behind to maxInflightBytes of unacknowledged appends while it catches up', () => {
    const limits = { maxInflight: 64, maxEntriesPerAppend: 512, maxAppendBytes: 250, maxInflightBytes: 1000 };
    const net = TinyNet.bootstrapped(3, limits);
    net.elect('n1');
    net.isolate('n3');
    for (let i = 0; i < 60; i++) {
      net.core('n1').propose([bytes(100, `e${i}`)]);
      net.settle();
    }
    expect(net.core('n3').lastIndex).toBe(2);
    // From here on every message is let through and watched: the appends the leader sent n3 and n3
    // has not answered yet (the net delivers in order, and a follower answers each append once).
    const unanswered: number[] = [];
    let peak = 0;
    net.drop = (m) => {
      if (m.type === 'append' && m.to === 'n3') {
        const sum = m.entries.reduce((n, e) => n + e.data.byteLength, 0);
        expect(sum).toBeLessThanOrEqual(limits.maxAppendBytes);
        unanswered.push(sum);
        peak = Math.max(peak, unanswered.reduce((n, b) => n + b, 0));
      }
      if (m.type === 'appendResp' && m.from === 'n3') unanswered.shift();
      return false;
    };
    net.tick(5);
    expect(net.core('n3').lastIndex).toBe(net.core('n1').lastIndex);
    expect(net.node('n3').committed.map(text).slice(2)).toEqual(Array.from({ length: 60 }, (_, i) => `e${i}`.padEnd(100, '.')));
    // The append that crosses the limit still goes (under it before, one append's worth at most after);
    // and the pipeline was used, not one append at a time.
    expect(peak).toBeLessThan(limits.maxInflightBytes + limits.maxAppendBytes);
    expect(peak).toBeGreaterThanOrEqual(limits.maxInflightBytes);
  });

  it('§5.3 consistency check: a follower with a conflicting suffix has it replaced by the leader’s entries', () => {
    // n2 holds entries 2..3 from a term-2 leader that never committed them.
    const entry = (index: number, term: number, text: string) => ({ index, term, type: EntryType.Normal, data: data(text) });
    const stale = newCore('n2', {}, {
      hardState: { term: 2, vote: null, commit: 1 },
      entries: [{ index: 1, term: 1, type: EntryType.Config, data: new TextEncoder().encode('{"servers":[{"id":"n1","address":"a"},{"id":"n2","address":"b"},{"id":"n3","address":"c"}]}') }, entry(2, 2, 'lost'), entry(3, 2, 'lost too')],
    });
    stale.step({ type: 'append', from: 'n1', to: 'n2', term: 3, prevIndex: 3, prevTerm: 3, commit: 1, entries: [] });
    const reject = stale.ready().messages[0];
    expect(reject).toMatchObject({ type: 'appendResp', success: false, matchIndex: 3, hint: 2, lastIndex: 3 });
    // The leader retries from the hint: prev = 1, which matches.
    stale.step({ type: 'append', from: 'n1', to: 'n2', term: 3, prevIndex: 1, prevTerm: 1, commit: 3, entries: [entry(2, 3, 'kept'), entry(3, 3, 'kept too')] });
    const rd = stale.ready();
    expect(rd.entries.map((e) => [e.index, e.term])).toEqual([
      [2, 3],
      [3, 3],
    ]);
    expect(rd.committed.map(text)).toEqual(['kept', 'kept too']); // entry 1 was handed out with the first Ready
    expect(rd.messages[0]).toMatchObject({ type: 'appendResp', success: true, matchIndex: 3 });
  });

  it('backs a far-behind follower up with the hint and catches it up in probe mode', () => {
    const net = TinyNet.bootstrapped(3, { maxEntriesPerAppend: 2 });
    net.elect('n1');
    net.isolate('n3');
    for (let i = 0; i < 10; i++) {
      net.core('n1').propose([data(`e${i}`)]);
      net.settle();
    }
    expect(net.core('n3').lastIndex).toBe(2);
    net.heal();
    net.tick(3);
    expect(net.core('n3').lastIndex).toBe(net.core('n1').lastIndex);
    expect(net.node('n3').committed.map(text).slice(2)).toEqual(Array.from({ length: 10 }, (_, i) => `e${i}`));
  });

  it('keeps replicating when appends are lost: the next heartbeat answer resends', () => {
    const net = TinyNet.bootstrapped(3);
    net.elect('n1');
    net.drop = (m) => m.type === 'append';
    net.core('n1').propose([data('x')]);
    net.settle();
    net.heal();
    net.tick(3);
    expect(net.core('n2').commitIndex).toBe(3);
    expect(net.core('n3').commitIndex).toBe(3);
  });
});
