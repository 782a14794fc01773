// A restore prepared ahead of its Raft entry (Store.prepareRestore): decoding and loading run in
// slices while the store keeps applying, the entry then only swaps the prepared state in, and the
// result is exactly the state the same entry gives on a store that did not prepare (every server
// must end identical, prepared or not). Bytes that are not a snapshot are refused both ways.
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
  let turns = 0;
  const work = prepared.prepareRestore(key, bytes, { sliceMs: 1, pause: () => new Promise((r) => setImmediate(() => (turns++, r()))) });
  let index = 2;
  while (!prepared.hasPrepared(key)) {
    for (const s of [prepared, plain]) register(s, index, 100_000 + index);
    index++;
    await new Promise((r) => setImmediate(r));
  }
  await work;
  expect(turns).toBeGreaterThan(3);
  expect(index).toBeGreaterThan(3);
  expect(prepared.catalogNodes({}).value).toHaveLength(index - 1);

  const restore = { type: 'snapshot.restore' as const, state: bytes, prepared: key };
  expect(prepared.apply(index, restore)).toBe(true);
  expect(plain.apply(index, restore)).toBe(true);
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
  await expect(s.prepareRestore('sha256:bad', bad)).rejects.toThrow(/not a registry state snapshot/);
  expect(s.hasPrepared('sha256:bad')).toBe(false);
  const refused = s.apply(s.lastIndex + 1, { type: 'snapshot.restore', state: bad, prepared: 'sha256:bad' });
  expect(String(refused)).toMatch(/snapshot restore refused/);
  // Only the index moved (the entry was applied, as a refusal).
  const after = s.snapshot();
  expect(decodeSnapshot(after).state).toEqual(decodeSnapshot(before).state);
});

test('a discarded preparation is not used, and one still running when its entry is applied stops', async () => {
  const bytes = saved(200).snapshot();
  const s = new Store({ datacenter: 'dc1' });
  await s.prepareRestore('sha256:x', bytes);
  s.discardPrepared('sha256:x');
  expect(s.hasPrepared('sha256:x')).toBe(false);

  const late = s.prepareRestore('sha256:y', bytes, { sliceMs: 0 });
  expect(s.apply(1, { type: 'snapshot.restore', state: bytes, prepared: 'sha256:y' })).toBe(true);
  // It stops at its next slice rather than finish a state nobody will take.
  await expect(late).rejects.toThrow(/discarded/);
  expect(s.hasPrepared('sha256:y')).toBe(false);
  expect(s.catalogNodes({}).value).toHaveLength(200);
});
