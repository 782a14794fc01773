// Store.restoreFrom(source): a snapshot restored from its pieces, read one at a time (issue #34), gives
// the state restore() gives from the whole bytes — whatever the pieces' sizes, items cut anywhere —
// and keeps nothing of the pieces: each KV value owns its memory, and a piece is let go once decoded.
import { Store, type Command, type RequestStamp } from '@registry/store';

const bytes = (s: string) => new TextEncoder().encode(s);
const kv = (key: string, value: Uint8Array): Command => ({ type: 'kv.apply', op: { Verb: 'set', Key: key, Value: value, Flags: 0 } }) as Command;

function fill(store: Store, kvs = 300): void {
  let index = 0;
  const stamp = (i: number): RequestStamp => ({ id: `r.${i}`, at: 1_000 + i });
  for (let n = 0; n < 50; n++) {
    const req = { Node: `n${n}`, Address: `10.0.0.${n}`, Service: { ID: `s${n}`, Service: 'web', Port: 80 }, Checks: [{ CheckID: `c${n}`, Name: 'ok', ServiceID: `s${n}`, Status: 'passing' }] };
    store.apply(++index, { type: 'catalog.register', req } as Command, stamp(index));
  }
  for (let n = 0; n < kvs; n++) store.apply(++index, kv(`k/${String(n).padStart(4, '0')}`, n % 7 === 0 ? new Uint8Array(5000).fill(n & 255) : bytes(`value-${n}`)), stamp(index));
  store.apply(++index, { type: 'kv.apply', op: { Verb: 'delete', Key: 'k/0003' } } as Command, stamp(index));
}

function split(data: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < data.length; at += size) out.push(Uint8Array.prototype.slice.call(data, at, at + size));
  return out;
}

/** A source over `pieces` that records which were read and forgets each once read. */
function sourceOf(pieces: (Uint8Array | undefined)[]) {
  const reads: number[] = [];
  return {
    reads,
    source: {
      chunks: pieces.length,
      read: async (i: number) => {
        reads.push(i);
        const p = pieces[i]!;
        pieces[i] = undefined;
        return p;
      },
    },
  };
}

test.each([7, 100, 4096, 1 << 20])('pieces of %i bytes restore the state the whole bytes restore', async (size) => {
  const origin = new Store();
  // Tiny pieces cut every item many times (each cut is a retry): a smaller state keeps it quick.
  fill(origin, size < 100 ? 30 : 300);
  const data = origin.snapshot();
  const whole = new Store();
  whole.restore(data);
  const pieces = split(data, size);
  const { reads, source } = sourceOf(pieces);
  const restored = new Store();
  await restored.restoreFrom(source, { sliceMs: 1 });
  expect(reads).toEqual(pieces.map((_, i) => i));
  expect(Buffer.compare(restored.snapshot(), data)).toBe(0);
  expect(restored.lastIndex).toBe(whole.lastIndex);
  const values = (st: Store) => st.kvList('k/').value.map((e) => [e.Key, e.ModifyIndex, Buffer.from(e.Value ?? []).toString('hex')]);
  expect(values(restored)).toEqual(values(whole));
  expect(restored.catalogNodes().value).toEqual(whole.catalogNodes().value);
});

test('values are owned: a value is not a view into the bytes it was decoded from', async () => {
  const origin = new Store();
  fill(origin);
  const data = origin.snapshot();
  const restored = new Store();
  await restored.restoreFrom(sourceOf(split(data, 64 << 10)).source);
  for (const key of ['k/0000', 'k/0007', 'k/0299']) {
    const entry = (restored as unknown as { state: { kv: { get(k: string): { Value: Uint8Array } | undefined } } }).state.kv.get(key)!;
    expect(entry.Value.byteOffset).toBe(0);
    expect(entry.Value.buffer.byteLength).toBe(entry.Value.byteLength);
  }
});

test('bytes that are not a snapshot, or end early, are refused and the store stays as it was', async () => {
  const origin = new Store();
  fill(origin);
  const data = origin.snapshot();
  const restored = new Store();
  restored.apply(1, kv('kept', bytes('yes')));
  await expect(restored.restoreFrom(sourceOf(split(data.subarray(0, data.length - 10), 1000)).source)).rejects.toThrow(/not a registry state snapshot: unexpected end of snapshot data/);
  const extra = new Uint8Array(data.length + 1);
  extra.set(data);
  await expect(restored.restoreFrom(sourceOf(split(extra, 1000)).source)).rejects.toThrow(/1 bytes after the snapshot value/);
  await expect(restored.restoreFrom(sourceOf([bytes('garbage!')]).source)).rejects.toThrow(/not a registry state snapshot/);
  expect(restored.kvGet('kept').value?.Key).toBe('kept');
  expect(restored.lastIndex).toBe(1);
});

test('afterStep runs after every step and before every piece, and changes nothing restored', async () => {
  const origin = new Store();
  fill(origin);
  const data = origin.snapshot();
  const pieces = split(data, 4096);
  const { source } = sourceOf(pieces);
  let calls = 0;
  const restored = new Store();
  await restored.restoreFrom(source, { afterStep: () => void calls++ });
  // At least once per piece read after the first: each read is a turn of the event loop.
  expect(calls).toBeGreaterThanOrEqual(pieces.length - 1);
  expect(Buffer.compare(restored.snapshot(), data)).toBe(0);
});

test('afterStep runs within a slice too: a slice is time, a step a bounded amount of work', async () => {
  const origin = new Store();
  fill(origin, 5_000);
  const data = origin.snapshot();
  let calls = 0;
  const restored = new Store();
  // One piece and slices longer than the whole restore: no yield, no piece boundary to run at.
  await restored.restoreFrom(sourceOf([data]).source, { sliceMs: 60_000, afterStep: () => void calls++ });
  // 5,000 keys are at least ten steps of the decoder (512 items) and of the KV table's load (1,024).
  expect(calls).toBeGreaterThanOrEqual(10);
  expect(Buffer.compare(restored.snapshot(), data)).toBe(0);
});
