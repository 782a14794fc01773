// A follower's default reads share the question "what is the leader's commit index?" (issue #14):
// one call answers every read that arrived before it was sent; a read that arrives while a call is
// in flight waits for the next call, whose answer cannot predate the read.
import { CommitIndexBatcher } from '../../src/rpc/commit-index-batcher';

/** A leader whose answers the test releases by hand; `sent` counts the calls. */
function leader() {
  const pending: { resolve(i: number): void; reject(e: Error): void }[] = [];
  const state = { sent: 0, commit: 0 };
  const ask = () =>
    new Promise<number>((resolve, reject) => {
      state.sent++;
      const commitWhenSent = state.commit;
      pending.push({ resolve: () => resolve(commitWhenSent), reject });
    });
  const answerNext = () => pending.shift()!.resolve(0);
  const failNext = (msg: string) => pending.shift()!.reject(new Error(msg));
  return { ask, state, answerNext, failNext, pending };
}

const tick = () => new Promise((r) => setImmediate(r));

test('reads that arrive in the same event-loop turn share one call', async () => {
  const l = leader();
  const b = new CommitIndexBatcher(l.ask);
  l.state.commit = 7;
  const reads = Array.from({ length: 50 }, () => b.fetch());
  expect(l.state.sent).toBe(0); // sent at the end of the turn
  await tick();
  expect(l.state.sent).toBe(1);
  l.answerNext();
  expect(await Promise.all(reads)).toEqual(Array(50).fill(7));
  expect(b.counts).toEqual({ calls: 1, reads: 50 });
});

test('a read that arrives while a call is in flight is answered by a later call, sent after it arrived', async () => {
  const l = leader();
  const b = new CommitIndexBatcher(l.ask);
  l.state.commit = 3;
  const early = b.fetch();
  await tick();
  expect(l.state.sent).toBe(1);
  // A write commits at 4 and is acknowledged; then more reads arrive, while the first call is out.
  l.state.commit = 4;
  const late = [b.fetch(), b.fetch()];
  await tick();
  expect(l.state.sent).toBe(2); // pipelined: their own call leaves without waiting for the first
  l.answerNext();
  expect(await early).toBe(3);
  l.answerNext();
  expect(await Promise.all(late)).toEqual([4, 4]);
  expect(b.counts).toEqual({ calls: 2, reads: 3 });
});

test('at most maxInFlight calls are out at once; the reads arriving meanwhile share the next one', async () => {
  const l = leader();
  const b = new CommitIndexBatcher(l.ask, 1);
  l.state.commit = 5;
  const first = b.fetch();
  await tick();
  l.state.commit = 6;
  const queued = [b.fetch(), b.fetch(), b.fetch()];
  await tick();
  expect(l.state.sent).toBe(1);
  l.answerNext();
  expect(await first).toBe(5);
  await tick();
  expect(l.state.sent).toBe(2);
  l.answerNext();
  expect(await Promise.all(queued)).toEqual([6, 6, 6]);
  expect(b.counts).toEqual({ calls: 2, reads: 4 });
});

test('a failed call fails exactly its own reads, and the next batch asks again', async () => {
  const l = leader();
  const b = new CommitIndexBatcher(l.ask);
  l.state.commit = 9;
  const first = b.fetch();
  const second = b.fetch();
  await tick();
  l.failNext('leader gone');
  await expect(first).rejects.toThrow('leader gone');
  await expect(second).rejects.toThrow('leader gone');
  const third = b.fetch();
  await tick();
  expect(l.state.sent).toBe(2);
  l.answerNext();
  expect(await third).toBe(9);
});

test('a call that throws synchronously rejects its reads rather than wedging the batcher', async () => {
  let calls = 0;
  const b = new CommitIndexBatcher(() => {
    calls++;
    if (calls === 1) throw new Error('no leader');
    return Promise.resolve(12);
  });
  await expect(b.fetch()).rejects.toThrow('no leader');
  expect(await b.fetch()).toBe(12);
});
