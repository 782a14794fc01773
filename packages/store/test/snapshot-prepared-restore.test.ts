// A restore prepared ahead of its Raft entry from its staged file's pieces (Store.prepareRestoreFrom):
// decoding and loading run in slices while the store keeps applying, the entry then only swaps the
// prepared state in, and the result is exactly the state the same bytes give restored in one go
// (the older entry that carries them; every server must end identical). Bytes that are not a
// snapshot are refused; a staged entry whose state is not loaded is refused, changing nothing.
import { Store } from '@registry/store';
import { decodeSnapshot, decodeSnapshotSteps } from '../src/snapshot';
import { runSync } from '../src/snapshot-stream';

jest.setTimeout(60_000);

function register(s: Store, index: number, i: number): void {
  s.apply(index, {
    type: 'catalog.register',
    req: {
      Node: `node-${i}`, Address: `10.0.${(i >> 8) & 255}.${i & 255}`, NodeMeta: { rack: `r${i % 7}` },
      Service: { ID: `web-${i}`, Service: 'web', Port: 8080, Tags: ['v1'] },
      Check: { CheckID: `web-${i}-alive`, Name: 'alive', Status: i % 5 === 0 ? 'critical' : 'passing', ServiceID: `web-${i}` },
    },
  }, { id: `req-${index}`, at: 1_700_000_000_000 + index });
}

/** A store of `n` nodes with a service and a check each, and KV keys; its last index is n + 3. */
function saved(n: number): Store {
  const s = new Store({ datacenter: 'dc1', now: () => 1_700_000_000_000 });
  for (let i = 0; i < n; i++) register(s, i + 1, i);
  const bytes = (t: string) => new TextEncoder().encode(t);
  s.apply(n + 1, { type: 'kv.apply', op: { Verb: 'set', Key: 'app/config', Value: bytes('v1'), Flags: 0 } } as never);
  s.apply(n + 2, { type: 'kv.apply', op: { Verb: 'set', Key: 'app/flags', Value: new Uint8Array([0, 1, 2, 255]), Flags: 7 } } as never);
  s.apply(n + 3, { type: 'kv.apply', op: { Verb: 'delete', Key: 'app/config' } } as never);
  return s;
}

/** A staged file's bytes as the store reads them: pieces, and with `arenas` ranges into restore arenas. */
function sourceOf(bytes: Uint8Array, arenas = false, piece = 4096) {
  return {
    chunks: Math.ceil(bytes.length / piece),
    read: async (i: number) => bytes.slice(i * piece, (i + 1) * piece),
    ...(arenas ? { size: bytes.length, readRange: async (offset: number, into: Uint8Array) => into.set(bytes.subarray(offset, offset + into.length)) } : {}),
  };
}
const inSmallArenas = { arenaMinSnapshotBytes: 0, arenaBytes: 64 * 1024 };

function view(s: Store): unknown {
  return {
    nodes: s.catalogNodes({}),
    web: s.healthService('web', {}),
    kv: s.kvList('app/'),
    keys: ['nodes', 'services', 'checks', 'node:node-3', 'service:web'].map((k) => s.keyIndex(k)),
  };
}

test('the stepped decoder gives exactly what the one-shot decoder gives', () => {
  const bytes = saved(3000).snapshot();
  expect(runSync(decodeSnapshotSteps(bytes))).toEqual(decodeSnapshot(bytes));
});

test('a prepared restore swaps in the same state the entry gives unprepared, with writes applied meanwhile', async () => {
  const bytes = saved(5000).snapshot();
  const key = 'sha256:test-a';
  const prepared = new Store({ datacenter: 'dc1' });
  const plain = new Store({ datacenter: 'dc1' });
  for (const s of [prepared, plain]) register(s, 1, 99_999);

  // Preparing runs in slices: writes land on the live store between them, and nothing shows yet.
  const work = prepared.prepareRestoreFrom(key, sourceOf(bytes, true), { sliceMs: 1, ...inSmallArenas });
  let index = 2;
  while (!prepared.hasPrepared(key)) {
    for (const s of [prepared, plain]) register(s, index, 100_000 + index);
    index++;
    await new Promise((r) => setImmediate(r));
  }
  await work;
  expect(index).toBeGreaterThan(3);
  expect(prepared.catalogNodes({}).value).toHaveLength(index - 1);

  expect(prepared.apply(index, { type: 'snapshot.restore', staged: key, bytes: bytes.length })).toBe(true);
  expect(plain.apply(index, { type: 'snapshot.restore', state: bytes })).toBe(true);
  expect(prepared.hasPrepared(key)).toBe(false);
  expect(view(prepared)).toEqual(view(plain));
  expect(prepared.catalogNodes({}).value).toHaveLength(5000);
  // Byte for byte the same state (lastIndex is the entry's own on both).
  expect(Buffer.from(prepared.snapshot()).equals(Buffer.from(plain.snapshot()))).toBe(true);
  // And both keep applying alike.
  for (const s of [prepared, plain]) register(s, index + 1, 7);
  expect(Buffer.from(prepared.snapshot()).equals(Buffer.from(plain.snapshot()))).toBe(true);
});

test('a truncated state is refused when prepared and when applied, changing nothing', async () => {
  const bytes = saved(500).snapshot();
  const bad = bytes.subarray(0, bytes.length - 40);
  const s = saved(20);
  const before = Buffer.from(s.snapshot());
  await expect(s.prepareRestoreFrom('sha256:bad', sourceOf(bad))).rejects.toThrow(/not a registry state snapshot/);
  await expect(s.prepareRestoreFrom('sha256:bad', sourceOf(bad, true), inSmallArenas)).rejects.toThrow(/not a registry state snapshot/);
  expect(s.hasPrepared('sha256:bad')).toBe(false);
  const refused = s.apply(s.lastIndex + 1, { type: 'snapshot.restore', staged: 'sha256:bad', bytes: bad.length });
  expect(String(refused)).toMatch(/snapshot restore refused: the staged state sha256:bad is not loaded here/);
  expect(String(s.apply(s.lastIndex + 1, { type: 'snapshot.restore', state: bad }))).toMatch(/snapshot restore refused/);
  // Only the index moved (the entry was applied, as a refusal).
  const after = s.snapshot();
  expect(decodeSnapshot(after).state).toEqual(decodeSnapshot(before).state);
});

test('a discarded preparation is not used, and one still running when its entry comes stops', async () => {
  const bytes = saved(200).snapshot();
  const s = new Store({ datacenter: 'dc1' });
  await s.prepareRestoreFrom('sha256:x', sourceOf(bytes));
  s.discardPrepared('sha256:x');
  expect(s.hasPrepared('sha256:x')).toBe(false);
  expect(String(s.apply(1, { type: 'snapshot.restore', staged: 'sha256:x', bytes: bytes.length }))).toMatch(/not loaded here/);

  const late = s.prepareRestoreFrom('sha256:y', sourceOf(bytes), { sliceMs: 0 });
  expect(String(s.apply(2, { type: 'snapshot.restore', staged: 'sha256:y', bytes: bytes.length }))).toMatch(/not loaded here/);
  // It stops at its next slice rather than finish a state nobody will take.
  await expect(late).rejects.toThrow(/discarded/);
  expect(s.hasPrepared('sha256:y')).toBe(false);
  expect(s.catalogNodes({}).value).toHaveLength(0);
});
