// StoreSnapshot.persistTo(sink): the handle's bytes written in pieces through one reused buffer
// (Raft's SnapshotSink), never as one buffer the size of the snapshot. Joined, the pieces are the
// version-1 bytes persist() gives — while later commands are applied between the steps.
import { Store, SnapshotReleasedError, type Command, type RequestStamp } from '@registry/store';

const bytes = (s: string) => new TextEncoder().encode(s);

function register(n: number, status = 'passing'): Command {
  return {
    type: 'catalog.register',
    req: {
      Node: `n${n}`,
      Address: `10.0.${n >> 8}.${n & 255}`,
      NodeMeta: { rack: `r${n % 3}` },
      Service: { ID: `s${n}`, Service: `svc${n % 5}`, Tags: ['a'], Port: 80 + n },
      Checks: [{ CheckID: `c${n}`, Name: 'ok', ServiceID: `s${n}`, Status: status }],
    },
  } as Command;
}

const kv = (key: string, value: Uint8Array): Command => ({ type: 'kv.apply', op: { Verb: 'set', Key: key, Value: value, Flags: 0 } }) as Command;

/** Nodes, KV entries (one value larger than a piece) and stamped requests. */
function fill(store: Store): number {
  let index = 0;
  const stamp = (i: number): RequestStamp => ({ id: `r.${i}`, at: 1_000 + i });
  for (let n = 0; n < 400; n++) store.apply(++index, register(n), stamp(index));
  for (let n = 0; n < 100; n++) store.apply(++index, kv(`k/${n}`, bytes(`value-${n}`)), stamp(index));
  store.apply(++index, kv('big', new Uint8Array(5000).fill(7)), stamp(index));
  return index;
}

/** A sink that copies each piece (as a storage does) and notes which buffers the pieces were in. */
function copyingSink() {
  const pieces: Buffer[] = [];
  const buffers = new Set<ArrayBufferLike>();
  return {
    pieces,
    buffers,
    sink: {
      write: async (piece: Uint8Array) => {
        buffers.add(piece.buffer);
        pieces.push(Buffer.from(piece)); // a copy: the writer reuses the memory after this resolves
        await new Promise((r) => setImmediate(r)); // as a storage write: later commands run meanwhile
      },
    },
  };
}

test('the pieces, joined, are the bytes of the state at the handle index, with writes applied between steps', async () => {
  const reference = new Store();
  const at = fill(reference);
  const live = new Store();
  fill(live);
  const handle = live.openSnapshot();
  let index = at;
  let applied = 0;
  const { pieces, buffers, sink } = copyingSink();
  await handle.persistTo(sink, {
    step: 4,
    sliceMs: 0,
    pieceBytes: 1024,
    pause: async () => {
      // Later commands between the steps: new nodes, changed checks, KV written over.
      applied++;
      live.apply(++index, applied % 2 ? register(applied % 400, 'critical') : kv(`k/${applied % 100}`, bytes('changed')));
    },
  });
  handle.release();
  const joined = Buffer.concat(pieces);
  expect(applied).toBeGreaterThan(100);
  expect(joined.equals(Buffer.from(reference.snapshot()))).toBe(true);
  expect(pieces.length).toBeGreaterThan(20);
  // One buffer reused for (nearly) all of them; the large KV value may have needed one more.
  expect(buffers.size).toBeLessThanOrEqual(3);
  expect(Math.max(...pieces.slice(0, -1).map((p) => p.length))).toBeLessThan(1024 + 6000);

  const restored = new Store();
  restored.restore(joined);
  expect(restored.lastIndex).toBe(at);
  expect(restored.checkInvariants()).toEqual([]);
});

test('persistTo() refuses after release() and while persist() runs, and stops with the sink error', async () => {
  const store = new Store();
  fill(store);

  const released = store.openSnapshot();
  released.release();
  await expect(released.persistTo(copyingSink().sink)).rejects.toBeInstanceOf(SnapshotReleasedError);

  const busy = store.openSnapshot();
  const persisting = busy.persistTo(copyingSink().sink, { pieceBytes: 512 });
  await expect(busy.persist()).rejects.toThrow(/sink/);
  expect(() => busy.bytes()).toThrow(/sink/);
  await persisting;
  busy.release();

  const failing = store.openSnapshot();
  let writes = 0;
  await expect(
    failing.persistTo({
      write: async () => {
        if (++writes === 3) throw new Error('disk full');
      },
    }, { pieceBytes: 512 }),
  ).rejects.toThrow('disk full');
  expect(writes).toBe(3);
  failing.release();

  // A release() while pieces are being written stops it at the next slice.
  const stopped = store.openSnapshot();
  const stopping = stopped.persistTo(
    {
      write: async () => {
        stopped.release();
      },
    },
    { pieceBytes: 512 },
  );
  await expect(stopping).rejects.toBeInstanceOf(SnapshotReleasedError);
});

test('a dedup window of transaction results is encoded a result at a time, never as one value', async () => {
  // Each /v1/txn result holds a row per op: at 100,000 catalog nodes the window's outcomes were
  // encoded in one step and stalled a server's event loop for seconds (bench/catalog-scale).
  const store = new Store();
  let index = 0;
  const OPS = 20;
  for (let t = 0; t < 300; t++) {
    const ops = Array.from({ length: OPS }, (_, k) => ({ KV: { Verb: 'set', Key: `txn/${t}/${k}`, Value: bytes(`value-${t}-${k}`), Flags: 0 } }));
    store.apply(++index, { type: 'txn', ops } as Command, { id: `t.${index}`, at: 1_000 + index });
  }
  const handle = store.openSnapshot();
  const { pieces, sink } = copyingSink();
  // A piece per step (pieceBytes 1, one step a slice): each piece is what one step encoded.
  await handle.persistTo(sink, { sliceMs: 0, pieceBytes: 1 });
  handle.release();
  const joined = Buffer.concat(pieces);
  expect(joined.equals(Buffer.from(store.snapshot()))).toBe(true);
  // The window's outcomes alone are ~300 × 20 rows; one step holds at most a few results' worth.
  expect(joined.length).toBeGreaterThan(300 * OPS * 40);
  expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(32 * 1024);

  const restored = new Store();
  restored.restore(joined);
  expect(restored.checkInvariants()).toEqual([]);
  expect(restored.appliedRequest(`t.${index}`)).toEqual(store.appliedRequest(`t.${index}`));
  expect(restored.appliedRequest(`t.${index}`)?.result).toMatchObject({ Errors: null });
});
