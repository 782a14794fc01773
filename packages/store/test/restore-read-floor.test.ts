// The read floor a committed restore leaves (Store.readFloor, index-table.ts): the Raft index of
// the restore entry, which the RPC layer makes the lowest index any read answers, so blocking
// queries with an index from before the restore return (issue #29 item 13). It travels in the
// store's snapshot, so a server that installs a later snapshot answers the same indexes.
import { Store } from '@registry/store';

const bytes = (t: string) => new TextEncoder().encode(t);

test('a committed restore sets the floor to its own index, and a snapshot carries it', () => {
  const s = new Store({ datacenter: 'dc1', now: () => 1_700_000_000_000 });
  s.apply(1, { type: 'kv.apply', op: { Verb: 'set', Key: 'k', Value: bytes('saved'), Flags: 0 } } as never);
  const archive = s.snapshot();
  s.apply(2, { type: 'kv.apply', op: { Verb: 'set', Key: 'k', Value: bytes('later'), Flags: 0 } } as never);
  expect(s.readFloor).toBe(0);
  expect(s.apply(3, { type: 'snapshot.restore', state: archive } as never)).toBe(true);
  expect(s.readFloor).toBe(3);
  // The restored row keeps its own ModifyIndex: only what reads answer is raised.
  expect(s.kvGet('k').value?.ModifyIndex).toBe(1);

  const installed = new Store({ datacenter: 'dc1', now: () => 1_700_000_000_000 });
  installed.restore(s.snapshot());
  expect(installed.readFloor).toBe(3);
  // A later restore of an archive saved before that one moves the floor on, never back.
  expect(installed.apply(4, { type: 'snapshot.restore', state: archive } as never)).toBe(true);
  expect(installed.readFloor).toBe(4);
  expect(installed.checkInvariants()).toEqual([]);
});
