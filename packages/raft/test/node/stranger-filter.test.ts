// Which Raft messages a server drops as a stranger's (src/node/stranger-filter.ts, issue 31), and the
// one it must not: its own leader's, while the log it is catching up on holds a configuration that
// left that leader out (removed, then added back).
import type { Message } from '../../src/core/types';
import { strangerDrop, type StrangerView } from '../../src/node/stranger-filter';

const view = (over: Partial<StrangerView> = {}): StrangerView => ({
  members: [{ id: 'a' }, { id: 'b' }],
  self: 'b',
  leader: 'a',
  leading: false,
  sinceLeaderContactMs: 10,
  electionTimeoutMs: 500,
  ...over,
});
const heartbeat = (from: string): Message => ({ type: 'heartbeat', from, to: 'b', term: 3, commit: 0 });
const append = (from: string): Message => ({ type: 'append', from, to: 'b', term: 3, prevIndex: 0, prevTerm: 0, entries: [], commit: 0 });
const vote = (from: string): Message => ({ type: 'vote', from, to: 'b', term: 4, lastIndex: 9, lastTerm: 3 });

test('members, itself and a server with no configuration yet take everything', () => {
  expect(strangerDrop(vote('a'), view())).toBeNull();
  expect(strangerDrop(vote('b'), view())).toBeNull();
  expect(strangerDrop(vote('x'), view({ members: [] }))).toBeNull();
});

test('a stranger’s vote request is dropped; its appends only while this server leads or its leader is in contact', () => {
  expect(strangerDrop(vote('x'), view())).toMatch(/not a member/);
  expect(strangerDrop(append('x'), view())).toMatch(/while the leader is in contact/);
  expect(strangerDrop(append('x'), view({ leader: null, leading: true }))).toMatch(/while this server leads/);
  expect(strangerDrop(heartbeat('x'), view({ sinceLeaderContactMs: 600 }))).toBeNull();
});

test('the leader this server follows is never a stranger, even where its configuration leaves it out', () => {
  // The configuration the follower has replayed up to: {b, c}, from a removal of `a` that a later
  // entry undoes. Its lease with `a` is fresh (a's heartbeats): a's appends must still come in.
  const replaying = view({ members: [{ id: 'b' }, { id: 'c' }], leader: 'a', sinceLeaderContactMs: 20 });
  expect(strangerDrop(append('a'), replaying)).toBeNull();
  expect(strangerDrop(heartbeat('a'), replaying)).toBeNull();
  // Another stranger is still kept out in that state.
  expect(strangerDrop(append('x'), replaying)).toMatch(/while the leader is in contact/);
});
