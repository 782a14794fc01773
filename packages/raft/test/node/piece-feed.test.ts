// The feed a follower decodes a snapshot from while its pieces arrive (node/staged-restore.ts):
// pieces are read once each, in order, as they come; the end is known only with the last piece; a
// dropped transfer stops the decoder at its next read; and a decoder that lags holds up the
// receiver (room()) instead of the feed holding the whole snapshot.
import { PieceFeed } from '../../src/node/staged-restore';

const piece = (n: number) => new Uint8Array([n]);

test('pieces are read in order as they come, and the count is known with the last', async () => {
  const feed = new PieceFeed();
  expect(feed.chunks).toBe(Infinity);
  const first = feed.read(0);
  feed.push(piece(0));
  expect(await first).toEqual(piece(0));
  feed.push(piece(1));
  feed.push(piece(2), true);
  expect(feed.chunks).toBe(3);
  expect(await feed.read(1)).toEqual(piece(1));
  expect(await feed.read(2)).toEqual(piece(2));
  await expect(feed.read(1)).rejects.toThrow(/out of order/);
});

test('the last piece read before it was marked last still ends the feed (a decoder that asks for more finds the end)', async () => {
  const feed = new PieceFeed();
  const waiting = feed.read(0);
  feed.push(piece(0), true);
  expect(await waiting).toEqual(piece(0));
  expect(feed.chunks).toBe(1);
});

test('a dropped transfer fails the read under way and every later one', async () => {
  const feed = new PieceFeed();
  feed.push(piece(0));
  expect(await feed.read(0)).toEqual(piece(0));
  const waiting = feed.read(1);
  feed.fail(new Error('transfer dropped'));
  await expect(waiting).rejects.toThrow('transfer dropped');
  await expect(feed.read(1)).rejects.toThrow('transfer dropped');
});

test('a feed that ends before the decoder is done says so', async () => {
  const feed = new PieceFeed();
  feed.push(piece(0));
  await feed.read(0);
  const waiting = feed.read(1);
  feed.end();
  await expect(waiting).rejects.toThrow(/ended before/);
});

test('a lagging decoder holds up the receiver: room() waits until it has read enough', async () => {
  const feed = new PieceFeed();
  for (let i = 0; i < 16; i++) feed.push(piece(i));
  let roomy = false;
  const room = feed.room().then(() => (roomy = true));
  await new Promise((r) => setImmediate(r));
  expect(roomy).toBe(false);
  await feed.read(0);
  await room;
  expect(roomy).toBe(true);
});
