// Point-in-time snapshot handles: openSnapshot() taken at index i, persisted while later commands are
// applied between its steps, gives exactly the bytes of a store that applied only up to i — across
// every table, the index table and the requests dedup window — in the unchanged version-1 format.
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { SnapshotReleasedError, Store, type Command, type RequestStamp } from '@registry/store';
import { MsgpackWriter } from '../src/msgpack-writer';
import { encodeSnapshot } from '../src/snapshot';
import { encodeSteps, runSync, sortedStream, Fields } from '../src/snapshot-stream';
import type { IndexTable } from '../src/index-table';
import type { State } from '../src/state';

type Stamped = { cmd: Command; request?: RequestStamp };

const bytes = (s: string) => new TextEncoder().encode(s);
const uuid = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const SID = (n: number) => uuid('5e551000', n);
const SETTINGS = { LeafCertTTL: '72h', RotationPeriod: '2160h', PrivateKeyType: 'ec', PrivateKeyBits: 256 };
const root = (id: string, serial: number) => ({
  ID: id, Name: 'Registry CA Root Cert', SerialNumber: serial, SigningKeyID: `key-${id}`, NotBefore: '2024-01-01T00:00:00Z',
  NotAfter: '2034-01-01T00:00:00Z', RootCert: `CERT ${id}`, PrivateKey: `KEY ${id}`, IntermediateCerts: null,
});
const query = (n: number, session = '') => ({
  ID: uuid('aaaaaaaa', (n * 7919) % 1000), Name: `q${n}`, Session: session, Token: '',
  Template: { Type: '', Regexp: '', RemoveEmptyTags: false }, Service: { Service: `svc${n % 5}` }, DNS: { TTL: '' },
});
const server = (id: string) => ({ ID: id, Node: `node-${id}`, Address: `10.9.0.${id.length}:8300`, Datacenter: 'dc2', Build: '0.1.0' });
const AREA = uuid('11111111', 1);
const AREA2 = uuid('11111111', 2);

function register(n: number, address = `10.0.${n >> 8}.${n & 255}`, status = 'passing'): Command {
  const proxy = n % 7 === 3;
  return {
    type: 'catalog.register',
    req: {
      Node: `n${n}`, Address: address, NodeMeta: { rack: `r${n % 3}` },
      Service: proxy
        ? { ID: `p${n}`, Service: `web-proxy`, Kind: 'connect-proxy', Port: 21000, Proxy: { DestinationServiceName: `svc${n % 5}` } }
        : { ID: `s${n}`, Service: `svc${n % 5}`, Tags: n % 2 ? ['a'] : [], Port: 80 + n },
      Checks: [
        { CheckID: 'serfHealth', Name: 'serf', Status: 'passing' },
        { CheckID: `c${n}`, Name: 'svc ok', ServiceID: proxy ? `p${n}` : `s${n}`, Status: status },
      ],
    },
  } as Command;
}

/** Commands that fill every table (the state a handle is taken of). */
function before(): Command[] {
  const c: Command[] = [];
  c.push({ type: 'acl.builtins', createTime: '2024-05-01T10:00:00Z' } as Command);
  for (let i = 1; i <= 3; i++) c.push({ type: 'acl.policy-create', policy: { ID: uuid('bbbbbbbb', i), Name: `p${i}`, Rules: '' } } as Command);
  for (let i = 1; i <= 3; i++) {
    c.push({
      type: 'acl.token-create',
      token: { AccessorID: uuid('cccccccc', i), SecretID: uuid('dddddddd', i), CreateTime: '2024-05-01T10:00:00Z', Description: `t${i}`, Policies: [{ ID: uuid('bbbbbbbb', i) }] },
    } as Command);
  }
  c.push({ type: 'ca.initialize', Provider: 'registry', ClusterID: 'c1', TrustDomain: 'c1.registry', Config: SETTINGS, root: root('r1', 1) } as Command);
  c.push({ type: 'ca.serials', count: 5 } as Command);
  for (let n = 0; n < 120; n++) c.push(register(n));
  c.push({ type: 'coordinate.update', updates: Array.from({ length: 60 }, (_, n) => ({ Node: `n${n}`, Coord: { Vec: [n / 100, 0, 0, 0, 0, 0, 0, 0], Error: 1.5, Adjustment: 0, Height: 0.01 } })) } as Command);
  // More than 64 sessions and queries: with one item per step they are merge-sorted in steps.
  for (let n = 0; n < 80; n++) {
    c.push({ type: 'session.create', session: { ID: SID((n * 37) % 101), Name: '', Node: `n${n}`, Checks: ['serfHealth'], LockDelay: 0, Behavior: n % 2 ? 'delete' : 'release', TTL: '' } } as Command);
  }
  for (let n = 0; n < 150; n++) c.push({ type: 'kv.apply', op: { Verb: 'set', Key: `k/${(n * 13) % 150}`, Value: bytes(`v${n}`), Flags: n } } as Command);
  for (let n = 0; n < 20; n++) c.push({ type: 'kv.apply', op: { Verb: 'lock', Key: `lock/${n}`, Session: SID((n * 37) % 101), Value: bytes('held') } } as Command);
  for (let n = 0; n < 30; n += 3) c.push({ type: 'kv.apply', op: { Verb: 'delete', Key: `k/${n}` } } as Command);
  c.push({ type: 'kv.apply', op: { Verb: 'delete-tree', Key: 'k/1' } } as Command);
  for (let n = 1; n <= 5; n++) {
    c.push({ type: 'intention.upsert', op: 'create', intention: { ID: uuid('eeeeeeee', n), SourceName: `svc${n}`, DestinationName: 'svc0', SourceType: 'registry', Action: n % 2 ? 'allow' : 'deny', Meta: { n: String(n) } }, now: '2024-03-01T12:00:00Z' } as Command);
  }
  for (let n = 0; n < 70; n++) c.push({ type: 'query.set', op: 'create', query: query(n, n < 3 ? SID(37) : '') } as unknown as Command);
  c.push({ type: 'area.create', area: { ID: AREA, PeerDatacenter: 'dc2', RetryJoin: ['10.0.0.1'], UseTLS: false } } as Command);
  c.push({ type: 'area.create', area: { ID: AREA2, PeerDatacenter: 'dc3', RetryJoin: null, UseTLS: true } } as Command);
  c.push({ type: 'area.servers', id: AREA, upsert: [server('s1'), server('s22')] } as Command);
  return c;
}

/** Commands applied while the handle persists: each table changes, rows go, come back and appear. */
function after(): Command[] {
  const c: Command[] = [];
  for (let n = 0; n < 120; n += 2) c.push(register(n, `10.1.0.${n}`, n % 4 ? 'passing' : 'critical')); // critical checks invalidate sessions
  for (let n = 1; n < 40; n += 4) c.push({ type: 'catalog.deregister', req: { Node: `n${n}` } } as Command);
  for (let n = 3; n < 60; n += 6) c.push({ type: 'catalog.deregister', req: { Node: `n${n}`, ServiceID: n % 7 === 3 ? `p${n}` : `s${n}` } } as Command);
  for (let n = 120; n < 140; n++) c.push(register(n));
  c.push({ type: 'coordinate.update', updates: [{ Node: 'n0', Coord: { Vec: [0.5, 0, 0, 0, 0, 0, 0, 0], Error: 1, Adjustment: 0, Height: 0 } }] } as Command);
  for (let n = 0; n < 150; n += 2) c.push({ type: 'kv.apply', op: { Verb: 'set', Key: `k/${n}`, Value: bytes(`w${n}`), Flags: 0 } } as Command);
  for (let n = 1; n < 150; n += 5) c.push({ type: 'kv.apply', op: { Verb: 'delete', Key: `k/${n}` } } as Command);
  for (let n = 0; n < 30; n++) c.push({ type: 'kv.apply', op: { Verb: 'set', Key: `a/${n}`, Value: bytes('new'), Flags: 0 } } as Command);
  c.push({ type: 'kv.apply', op: { Verb: 'delete-tree', Key: 'lock/' } } as Command);
  for (let n = 0; n < 80; n += 3) c.push({ type: 'session.destroy', id: SID((n * 37) % 101) } as Command);
  c.push({ type: 'session.create', session: { ID: SID(500), Name: 'late', Node: 'n100', Checks: [], LockDelay: 0, Behavior: 'release', TTL: '' } } as Command);
  c.push({ type: 'acl.token-delete', accessorID: uuid('cccccccc', 2) } as Command);
  c.push({ type: 'acl.policy-update', policy: { ID: uuid('bbbbbbbb', 1), Name: 'p1-renamed', Rules: 'node "" { policy = "read" }' } } as Command);
  c.push({ type: 'intention.delete', id: uuid('eeeeeeee', 2) } as Command);
  c.push({ type: 'intention.upsert', op: 'update', intention: { ID: uuid('eeeeeeee', 3), SourceName: 'svc3', DestinationName: 'svc0', SourceType: 'registry', Action: 'deny', Meta: {} }, now: '2024-03-02T12:00:00Z' } as Command);
  c.push({ type: 'ca.rotate', previousRootId: 'r1', root: root('r2', 9), Config: SETTINGS, now: '2024-06-01T00:00:00Z' } as Command);
  c.push({ type: 'ca.serials', count: 3 } as Command);
  for (let n = 0; n < 70; n += 4) c.push({ type: 'query.delete', id: query(n).ID } as Command);
  c.push({ type: 'query.set', op: 'create', query: query(99) } as unknown as Command);
  c.push({ type: 'area.servers', id: AREA, upsert: [server('s3')], remove: ['s1'] } as Command);
  c.push({ type: 'area.delete', id: AREA2 } as Command);
  c.push({ type: 'area.update', id: AREA, UseTLS: true } as Command);
  return c;
}

/** Every command stamped; `at` jumps past the window's age bound so later ones evict earlier ones. */
function stamped(cmds: Command[], prefix: string, at: number): Stamped[] {
  return cmds.map((cmd, i) => ({ cmd, request: { id: `${prefix}.${i}`, at: at + i } }));
}

function applyAll(store: Store, entries: readonly Stamped[], from: number): number {
  let index = from;
  for (const e of entries) store.apply(++index, e.cmd, e.request);
  return index;
}

/** The old one-shot encoder over the tables' dump(): what a version-1 snapshot always was. */
function legacySnapshot(store: Store): Uint8Array {
  const s = store as unknown as { state: State; indexes: IndexTable; lastIndex: number };
  return encodeSnapshot({ version: 1, lastIndex: s.lastIndex, indexes: s.indexes.entries(), state: s.state.dump() });
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe('a snapshot handle is the state at its index', () => {
  const A = stamped(before(), 'a', 1_000);
  const B = stamped(after(), 'b', 1_000 + 10 * 60_000); // B's first stamp ages out the whole of A

  test('persisted while later commands are applied between every item, across every table', async () => {
    const reference = new Store();
    const at = applyAll(reference, A, 0);

    const live = new Store();
    applyAll(live, A, 0);
    const handle = live.openSnapshot();
    expect(handle.index).toBe(at);
    let next = 0;
    let index = at;
    const data = await handle.persist({
      step: 1,
      sliceMs: 0,
      pause: async () => {
        // One later command between every step (a step is one item here).
        if (next < B.length) live.apply(++index, B[next].cmd, B[next++].request);
      },
    });
    expect(next).toBe(B.length); // the persist outlasted every later command
    handle.release();

    // The bytes: those of a store that stopped at the handle's index, and of the old encoder.
    expect(same(data, reference.snapshot())).toBe(true);
    expect(same(data, legacySnapshot(reference))).toBe(true);

    // Restored into a fresh store: the same state, indexes and dedup window.
    const restored = new Store();
    restored.restore(data);
    expect(restored.lastIndex).toBe(at);
    expect(restored.checkInvariants()).toEqual([]);
    expect(same(restored.snapshot(), data)).toBe(true);
    for (const probe of ['a.0', 'a.7', `a.${A.length - 1}`]) expect(restored.appliedRequest(probe)).toEqual(reference.appliedRequest(probe));
    expect(restored.appliedRequest('a.0')).toBeDefined();
    expect(restored.appliedRequest('b.0')).toBeUndefined();
    expect(restored.kvList('').value).toEqual(reference.kvList('').value);
    expect(restored.sessionList().value).toEqual(reference.sessionList().value);
    expect(restored.healthService('svc1', {}).value).toEqual(reference.healthService('svc1', {}).value);
    expect(restored.queryList().value).toEqual(reference.queryList().value);

    // And the live store went on undisturbed: it is what applying A then B gives.
    const straight = new Store();
    applyAll(straight, [...A, ...B], 0);
    expect(live.checkInvariants()).toEqual([]);
    expect(same(live.snapshot(), straight.snapshot())).toBe(true);
    expect(live.appliedRequest('a.0')).toBeUndefined(); // evicted from the live window meanwhile
  });

  test('two handles open at once each keep their own index', async () => {
    const live = new Store();
    const half = Math.floor(A.length / 2);
    let index = applyAll(live, A.slice(0, half), 0);
    const first = live.openSnapshot();
    index = applyAll(live, A.slice(half), index);
    const second = live.openSnapshot();
    const firstRef = new Store();
    applyAll(firstRef, A.slice(0, half), 0);
    const secondRef = new Store();
    applyAll(secondRef, A, 0);
    let next = 0;
    const pause = async () => {
      if (next < B.length) live.apply(++index, B[next].cmd, B[next++].request);
    };
    const [a, b] = await Promise.all([first.persist({ step: 3, sliceMs: 0, pause }), second.persist({ step: 2, sliceMs: 0, pause })]);
    expect(same(a, firstRef.snapshot())).toBe(true);
    expect(same(b, secondRef.snapshot())).toBe(true);
  });

  test('the synchronous snapshot() and bytes() are the same bytes', () => {
    const store = new Store();
    applyAll(store, A, 0);
    const handle = store.openSnapshot();
    const viaHandle = handle.bytes();
    expect(same(viaHandle, store.snapshot())).toBe(true);
    expect(same(viaHandle, legacySnapshot(store))).toBe(true);
    expect(handle.bytes()).toBe(viaHandle);
  });
});

// ---- random sequences ----

const nodeName = fc.constantFrom('a', 'A', 'b', 'c', 'd');
const key = fc.constantFrom('x', 'x/1', 'x/2', 'y', 'y/z');
const sessionNo = fc.integer({ min: 1, max: 4 });
const randomCommand: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ n: nodeName, addr: fc.constantFrom('1', '2'), svc: fc.option(fc.constantFrom('web', 'db'), { nil: undefined }), status: fc.constantFrom('passing', 'critical') }).map(
    ({ n, addr, svc, status }) =>
      ({
        type: 'catalog.register',
        req: { Node: n, Address: addr, Service: svc ? { Service: svc } : undefined, Checks: [{ CheckID: 'serfHealth', Name: 'serf', Status: status }] },
      }) as Command,
  ),
  fc.record({ n: nodeName, svc: fc.option(fc.constantFrom('web', 'db'), { nil: undefined }) }).map(({ n, svc }) => ({ type: 'catalog.deregister', req: { Node: n, ServiceID: svc } }) as Command),
  fc.record({ n: nodeName, x: fc.double({ min: -1, max: 1, noNaN: true }) }).map(
    ({ n, x }) => ({ type: 'coordinate.update', updates: [{ Node: n, Coord: { Vec: [x, 0, 0, 0, 0, 0, 0, 0], Error: 1, Adjustment: 0, Height: 0 } }] }) as Command,
  ),
  fc.record({ k: key, v: fc.string({ maxLength: 3 }) }).map(({ k, v }) => ({ type: 'kv.apply', op: { Verb: 'set', Key: k, Value: bytes(v), Flags: 0 } }) as Command),
  key.map((k) => ({ type: 'kv.apply', op: { Verb: 'delete', Key: k } }) as Command),
  fc.constantFrom('x', 'y').map((k) => ({ type: 'kv.apply', op: { Verb: 'delete-tree', Key: k } }) as Command),
  fc.record({ k: key, s: sessionNo }).map(({ k, s }) => ({ type: 'kv.apply', op: { Verb: 'lock', Key: k, Session: SID(s), Value: null } }) as Command),
  fc.record({ s: sessionNo, n: nodeName }).map(
    ({ s, n }) => ({ type: 'session.create', session: { ID: SID(s), Name: '', Node: n, Checks: ['serfHealth'], LockDelay: 0, Behavior: 'delete', TTL: '' } }) as Command,
  ),
  sessionNo.map((s) => ({ type: 'session.destroy', id: SID(s) }) as Command),
);
/** Request ids from a small pool (so copies are deduplicated) and clock jumps (so the window ages). */
const randomEntry: fc.Arbitrary<Stamped> = fc.record({
  cmd: randomCommand,
  request: fc.option(fc.record({ id: fc.constantFrom('r1', 'r2', 'r3', 'r4', 'r5', 'r6'), at: fc.integer({ min: 0, max: 200_000 }) }), { nil: undefined }),
});

describe('random command sequences', () => {
  test('a handle persisted while the rest is applied equals a store that stopped at its index', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(randomEntry, { maxLength: 40 }),
        fc.array(randomEntry, { maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 3 }),
        async (first, rest, step, perPause) => {
          // Stamps are applied in time order, as a leader proposes them.
          let clock = 0;
          const timed = (es: Stamped[]) => es.map((e) => (e.request ? { ...e, request: { ...e.request, at: (clock += e.request.at) } } : e));
          const early = timed(first);
          const late = timed(rest);
          const reference = new Store();
          const at = applyAll(reference, early, 0);
          const live = new Store();
          let index = applyAll(live, early, 0);
          const handle = live.openSnapshot();
          let next = 0;
          const data = await handle.persist({
            step,
            sliceMs: 0,
            pause: async () => {
              for (let k = 0; k < perPause && next < late.length; k++) live.apply(++index, late[next].cmd, late[next++].request);
            },
          });
          applyAll(live, late.slice(next), index);
          expect(same(data, reference.snapshot())).toBe(true);
          const restored = new Store();
          restored.restore(data);
          expect(restored.lastIndex).toBe(at);
          expect(restored.checkInvariants()).toEqual([]);
          const straight = new Store();
          applyAll(straight, [...early, ...late], 0);
          expect(same(live.snapshot(), straight.snapshot())).toBe(true);
        },
      ),
      { numRuns: 200, seed: 20261123 },
    );
  });
});

// ---- the handle's contract ----

describe('StoreSnapshot', () => {
  function populated(): Store {
    const s = new Store();
    applyAll(s, stamped(before(), 'p', 1), 0);
    return s;
  }

  test('persist() twice gives the same promise; release() afterwards changes nothing', async () => {
    const handle = populated().openSnapshot();
    const p = handle.persist();
    expect(handle.persist()).toBe(p);
    const data = await p;
    handle.release();
    expect(await handle.persist()).toBe(data);
    expect(handle.costMs).toBeGreaterThan(0);
  });

  test('release() before or during persist() rejects it with SnapshotReleasedError', async () => {
    const released = populated().openSnapshot();
    released.release();
    await expect(released.persist()).rejects.toBeInstanceOf(SnapshotReleasedError);
    expect(() => released.bytes()).toThrow(SnapshotReleasedError);

    const during = populated().openSnapshot();
    let pauses = 0;
    const p = during.persist({
      step: 1,
      sliceMs: 0,
      pause: async () => {
        if (++pauses === 5) during.release();
      },
    });
    await expect(p).rejects.toBeInstanceOf(SnapshotReleasedError);
  });

  test('bytes() finishes a persist() under way, which then resolves with the same bytes', async () => {
    const store = populated();
    const handle = store.openSnapshot();
    let pauses = 0;
    let sync: Uint8Array | undefined;
    const p = handle.persist({
      step: 1,
      sliceMs: 0,
      pause: async () => {
        if (++pauses === 3) sync = handle.bytes();
      },
    });
    const data = await p;
    expect(data).toBe(sync);
    expect(same(data, store.snapshot())).toBe(true);
  });

  test('persist() yields to the event loop between slices', async () => {
    const handle = populated().openSnapshot();
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    await handle.persist({ step: 1, sliceMs: 0 });
    clearInterval(ticker);
    expect(turns).toBeGreaterThan(0);
  });

  test('bytes are written into one buffer sized from the last snapshot, never one much larger', () => {
    const store = new Store();
    let index = 0;
    for (let n = 0; n < 5_000; n++) store.apply(++index, register(n));
    const big = store.snapshot();
    for (let n = 0; n < 4_900; n++) store.apply(++index, { type: 'catalog.deregister', req: { Node: `n${n}` } } as Command);
    const small = store.snapshot(); // sized for `big`: copied out rather than keeping that buffer alive
    expect(small.buffer.byteLength).toBeLessThan(2 * small.length);
    const again = store.snapshot();
    expect(same(again, small)).toBe(true);
    expect(again.buffer.byteLength).toBeLessThanOrEqual(small.length + (small.length >> 3) + (64 << 10));
    expect(big.length).toBeGreaterThan(10 * small.length);
  });

  test('a snapshot whose state is restored over keeps the state it was taken of', async () => {
    const store = populated();
    const expected = store.snapshot();
    const handle = store.openSnapshot();
    store.restore(new Store().snapshot()); // the store becomes empty meanwhile
    expect(same(await handle.persist({ step: 5, sliceMs: 0 }), expected)).toBe(true);
  });
});

// ---- the format ----

describe('the version-1 format', () => {
  test('a snapshot written before the newer tables existed still restores', () => {
    const old = encodeSnapshot({
      version: 1,
      lastIndex: 3,
      indexes: [['nodes', 3]],
      state: {
        catalog: { nodes: [{ ID: '', Node: 'n1', Address: '1', Datacenter: 'dc1', TaggedAddresses: null, Meta: null, CreateIndex: 3, ModifyIndex: 3 }], services: [], checks: [] },
        coordinates: { coordinates: [] },
      } as never,
    });
    const store = new Store();
    store.restore(old);
    expect(store.catalogNodes().value.map((n) => n.Node)).toEqual(['n1']);
    expect(store.checkInvariants()).toEqual([]);
  });

  test('a merge sort in steps orders like Array.prototype.sort, stably', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ k: fc.integer({ min: 0, max: 20 }), i: fc.nat() }), { maxLength: 300 }), fc.integer({ min: 1, max: 3 }), (items, step) => {
        const compare = (a: { k: number }, b: { k: number }) => a.k - b.k;
        const expected = [...items].sort(compare);
        const encoded = runSync(encodeSteps(new Fields([['s', sortedStream([...items], compare)]]), step));
        expect(new Packr({ useRecords: false }).unpack(encoded)).toEqual({ s: expected });
      }),
      { numRuns: 200, seed: 7 },
    );
  });
});

describe('MsgpackWriter', () => {
  const packr = new Packr({ useRecords: false });
  const write = (v: unknown) => {
    const w = new MsgpackWriter();
    w.value(v);
    return Buffer.concat(w.finish());
  };

  test('writes what msgpackr writes, for any plain value', () => {
    const unicode = fc.string({ unit: 'binary', maxLength: 90 });
    const lone = fc.constantFrom('\ud800', 'a\udc00b', `${'x'.repeat(70)}\ud83d`, '\ud83d\ude00'.repeat(40));
    const num = fc.oneof(
      fc.integer({ min: -0x100000000, max: 0x100000000 }),
      fc.constantFrom(0, -0, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, -0x20, -0x21, -0x80, -0x81, -0x8000, -0x8001, 2 ** 53, NaN, Infinity, -Infinity, 0.5),
      fc.double(),
    );
    const leaf = fc.oneof(unicode, lone, num, fc.boolean(), fc.constant(null), fc.constant(undefined), fc.uint8Array({ maxLength: 300 }));
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 20 }),
      object: fc.dictionary(fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('1', '0', '10', 'CreateIndex')), tie('value'), { maxKeys: 20 }),
    }));
    fc.assert(
      fc.property(value, (v) => {
        expect(write(v).equals(packr.pack(v))).toBe(true);
      }),
      { numRuns: 2000, seed: 11 },
    );
  });

  test('a prototype-less map (users\' keys: Meta, headers) is written as msgpackr writes it, on the writer\'s own path', () => {
    const meta = Object.assign(Object.create(null) as Record<string, unknown>, { constructor: 'c', toString: 't', rack: { nested: Object.create(null) } });
    expect(write({ Meta: meta }).equals(packr.pack({ Meta: meta }))).toBe(true);
    const w = new MsgpackWriter();
    const raw = jest.spyOn(w as unknown as { raw(b: Uint8Array): void }, 'raw');
    w.value({ Meta: meta });
    expect(raw).not.toHaveBeenCalled(); // not handed to msgpackr (its per-object probes: see msgpack-writer.ts)
  });

  test('a byte string (a KV value: a Buffer, a slice of one, a Uint8Array) is written as msgpackr writes it, on the writer\'s own path', () => {
    const big = Buffer.alloc(70_000, 7);
    for (const n of [0, 1, 255, 256, 4096, 65535, 65536]) {
      for (const v of [Buffer.alloc(n, 3), big.subarray(1, 1 + n), new Uint8Array(n).fill(9)]) {
        expect(write({ Value: v }).equals(packr.pack({ Value: v }))).toBe(true);
        const w = new MsgpackWriter();
        const raw = jest.spyOn(w as unknown as { raw(b: Uint8Array): void }, 'raw');
        w.value({ Value: v });
        expect(raw).not.toHaveBeenCalled(); // copied once, not packed by msgpackr and then copied
      }
    }
  });

  test('large arrays, strings and byte strings take the wider headers, as in msgpackr', () => {
    for (const v of [Array.from({ length: 70_000 }, (_, i) => i), 'é'.repeat(40_000), 'x'.repeat(70_000), new Uint8Array(70_000), { big: 'y'.repeat(300) }]) {
      expect(write(v).equals(packr.pack(v))).toBe(true);
    }
  });

  test('a size hint makes the output one buffer; without it the pieces join to the same bytes', () => {
    const v = { list: Array.from({ length: 20_000 }, (_, i) => ({ n: i, s: `item-${i}` })) };
    const expected = packr.pack(v);
    const hinted = new MsgpackWriter(expected.length);
    hinted.value(v);
    const one = hinted.finish();
    expect(one).toHaveLength(1);
    expect(Buffer.from(one[0]).equals(expected)).toBe(true);
    const unhinted = new MsgpackWriter();
    unhinted.value(v);
    const pieces = unhinted.finish();
    expect(pieces.length).toBeGreaterThan(1);
    expect(Buffer.concat(pieces).equals(expected)).toBe(true);
  });
});
