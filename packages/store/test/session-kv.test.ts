// Sessions, the KV store, locks and transactions through the Store's API: validation texts, lock
// semantics, invalidation paths (destroy, check critical, check/node deregistered), Behavior=delete,
// lock-delay, prefix indexes with tombstones, transaction atomicity, snapshot/restore.
import { CommandError, type KvOp, type SessionData, type TxnReply } from '@registry/store';
import { Driver } from './support/driver';

const SID = (n: number) => `5e551000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const bytes = (s: string) => new Uint8Array(Buffer.from(s));
const errorOf = (v: unknown) => (v instanceof CommandError ? v.message : `not an error: ${JSON.stringify(v)}`);

let clock = 1_000_000;
function setup(): Driver {
  clock = 1_000_000;
  const d = new Driver('dc1', { now: () => clock });
  d.register({
    Node: 'n1',
    Address: '10.0.0.1',
    Checks: [
      { CheckID: 'serfHealth', Name: 'serf', Status: 'passing' },
      { CheckID: 'disk', Name: 'disk', Status: 'warning' },
    ],
  } as never);
  return d;
}

function session(n: number, extra: Partial<SessionData> = {}): SessionData {
  return { ID: SID(n), Name: '', Node: 'n1', Checks: ['serfHealth'], LockDelay: 15e9, Behavior: 'release', TTL: '', ...extra };
}

const create = (d: Driver, n: number, extra: Partial<SessionData> = {}) => d.apply({ type: 'session.create', session: session(n, extra) });
const kv = (d: Driver, op: KvOp) => d.apply({ type: 'kv.apply', op: op as never });
const set = (d: Driver, key: string, value: string) => kv(d, { Verb: 'set', Key: key, Value: bytes(value) });
const lock = (d: Driver, key: string, n: number, value = '') => kv(d, { Verb: 'lock', Key: key, Session: SID(n), Value: bytes(value) });
const entry = (d: Driver, key: string) => d.store.kvGet(key).value;

describe('session.create', () => {
  test('creates a session and answers its ID; it is listed, by node and by ID', () => {
    const d = setup();
    expect(create(d, 1, { Name: 'lock', Checks: ['serfHealth', 'disk'] })).toBe(SID(1));
    const info = d.store.sessionInfo(SID(1));
    expect(info.value).toEqual([{ ...session(1, { Name: 'lock', Checks: ['serfHealth', 'disk'] }), CreateIndex: 2, ModifyIndex: 2 }]);
    expect(info.index).toBe(2);
    expect(d.store.sessionsOfNode('N1').value.map((s) => s.ID)).toEqual([SID(1)]);
    expect(d.store.sessionList().value).toHaveLength(1);
    expect(d.store.sessionInfo(SID(9)).value).toBeNull();
  });

  test.each([
    ['an unknown node', { Node: 'nope' }, 'Missing node registration'],
    ['an unknown check', { Checks: ['gone'] }, "Missing check 'gone' registration"],
    ['an empty node', { Node: '' }, 'Must provide Node'],
    ['a bad Behavior', { Behavior: 'explode' as never }, "Invalid Behavior setting 'explode'"],
    ['an unparsable TTL', { TTL: '10' }, "Session TTL '10' invalid"],
  ])('refuses %s', (_what, extra, message) => {
    const d = setup();
    expect(errorOf(create(d, 1, extra))).toBe(message);
    expect(d.store.sessionList().value).toEqual([]);
  });

  test('refuses a critical check, and accepts no checks at all', () => {
    const d = setup();
    d.register({ Node: 'n1', Address: '10.0.0.1', SkipNodeUpdate: true, Check: { CheckID: 'disk', Name: 'disk', Status: 'critical' } } as never);
    expect(errorOf(create(d, 1, { Checks: ['disk'] }))).toBe("Check 'disk' is in critical state");
    expect(create(d, 2, { Checks: null })).toBe(SID(2));
    expect(d.store.sessionInfo(SID(2)).value?.[0].Checks).toBeNull();
  });
});

describe('KV writes', () => {
  test('set keeps CreateIndex, moves ModifyIndex, and stores flags and bytes', () => {
    const d = setup();
    expect(kv(d, { Verb: 'set', Key: 'a', Value: bytes('1'), Flags: 42 })).toBe(true);
    expect(set(d, 'a', '2')).toBe(true);
    const e = entry(d, 'a');
    expect(e).toMatchObject({ Key: 'a', Flags: 0, LockIndex: 0, Session: '', CreateIndex: 2, ModifyIndex: 3 });
    expect(Buffer.from(e!.Value!).toString()).toBe('2');
  });

  test('cas with index 0 creates only; with the ModifyIndex replaces; otherwise false', () => {
    const d = setup();
    expect(kv(d, { Verb: 'cas', Key: 'c', Index: 0, Value: bytes('x') })).toBe(true);
    expect(kv(d, { Verb: 'cas', Key: 'c', Index: 0, Value: bytes('y') })).toBe(false);
    expect(kv(d, { Verb: 'cas', Key: 'c', Index: 99, Value: bytes('y') })).toBe(false);
    expect(kv(d, { Verb: 'cas', Key: 'c', Index: 2, Value: bytes('y') })).toBe(true);
    expect(Buffer.from(entry(d, 'c')!.Value!).toString()).toBe('y');
  });

  test('delete-cas deletes only at the right index; a missing key counts as deleted', () => {
    const d = setup();
    set(d, 'k', 'v');
    expect(kv(d, { Verb: 'delete-cas', Key: 'k', Index: 1 })).toBe(false);
    expect(kv(d, { Verb: 'delete-cas', Key: 'k', Index: 2 })).toBe(true);
    expect(entry(d, 'k')).toBeNull();
    expect(kv(d, { Verb: 'delete-cas', Key: 'k', Index: 2 })).toBe(true);
  });

  test('delete-tree removes a prefix; the prefix index keeps the deletion (tombstones)', () => {
    const d = setup();
    set(d, 'app/a', '1');
    set(d, 'app/b', '2');
    set(d, 'other', '3');
    const before = d.store.kvList('app/').index;
    expect(kv(d, { Verb: 'delete-tree', Key: 'app/' })).toBe(true);
    const after = d.store.kvList('app/');
    expect(after.value).toEqual([]);
    expect(after.index).toBeGreaterThan(before);
    expect(d.store.kvList('').value.map((e) => e.Key)).toEqual(['other']);
    expect(d.store.checkInvariants()).toEqual([]);
  });

  test('keys with a separator collapse folders', () => {
    const d = setup();
    for (const k of ['web/a', 'web/b/c', 'web/b/d', 'web/e/', 'webz']) set(d, k, '');
    expect(d.store.kvKeys('web/', '/').value).toEqual(['web/a', 'web/b/', 'web/e/']);
    expect(d.store.kvKeys('web', '/').value).toEqual(['web/', 'webz']);
    expect(d.store.kvKeys('', '').value).toHaveLength(5);
  });

  test('a write wakes watchers of its key and of every prefix, and nobody else', () => {
    const d = setup();
    const fired: string[] = [];
    for (const p of ['', 'a', 'a/b', 'a/b/c', 'z']) d.store.watch(d.store.kvList(p).keys, () => fired.push(p));
    set(d, 'a/b/c', '1');
    expect(fired.sort()).toEqual(['', 'a', 'a/b', 'a/b/c']);
  });

  test('an empty key is refused except by delete-tree', () => {
    const d = setup();
    expect(errorOf(set(d, '', 'x'))).toBe('Missing key name');
  });
});

describe('locks', () => {
  test('acquire, re-acquire by the holder, refusal for another session, release, hand-over', () => {
    const d = setup();
    create(d, 1);
    create(d, 2);
    expect(lock(d, 'l', 1, 'one')).toBe(true);
    expect(entry(d, 'l')).toMatchObject({ Session: SID(1), LockIndex: 1 });
    expect(lock(d, 'l', 1, 'again')).toBe(true);
    expect(entry(d, 'l')).toMatchObject({ Session: SID(1), LockIndex: 1 });
    expect(lock(d, 'l', 2)).toBe(false);
    expect(kv(d, { Verb: 'unlock', Key: 'l', Session: SID(2) })).toBe(false);
    expect(kv(d, { Verb: 'unlock', Key: 'l', Session: SID(1), Value: bytes('released') })).toBe(true);
    expect(entry(d, 'l')).toMatchObject({ Session: '', LockIndex: 1 });
    expect(lock(d, 'l', 2)).toBe(true);
    expect(entry(d, 'l')).toMatchObject({ Session: SID(2), LockIndex: 2 });
  });

  test('a plain set keeps the holder; acquiring with an unknown session is an error', () => {
    const d = setup();
    create(d, 1);
    lock(d, 'l', 1);
    set(d, 'l', 'new value');
    expect(entry(d, 'l')).toMatchObject({ Session: SID(1), LockIndex: 1 });
    expect(errorOf(lock(d, 'x', 7))).toBe(`invalid session "${SID(7)}"`);
  });

  test('destroy releases held locks, starts their lock-delay and keeps other keys', () => {
    const d = setup();
    create(d, 1, { LockDelay: 5e9 });
    lock(d, 'l', 1, 'v');
    set(d, 'free', 'x');
    expect(d.apply({ type: 'session.destroy', id: SID(1) })).toBe(true);
    expect(entry(d, 'l')).toMatchObject({ Session: '', LockIndex: 1, ModifyIndex: d.index });
    expect(d.store.kvLockDelayed('l')).toBe(true);
    expect(d.store.kvLockDelayed('free')).toBe(false);
    clock += 5_001;
    expect(d.store.kvLockDelayed('l')).toBe(false);
  });

  test('lock-delay is capped at 60 s, and 0 means none', () => {
    const d = setup();
    create(d, 1, { LockDelay: 600e9 });
    create(d, 2, { LockDelay: 0 });
    lock(d, 'a', 1);
    lock(d, 'b', 2);
    d.apply({ type: 'session.destroy', id: SID(1) });
    d.apply({ type: 'session.destroy', id: SID(2) });
    expect(d.store.kvLockDelayed('b')).toBe(false);
    clock += 59_000;
    expect(d.store.kvLockDelayed('a')).toBe(true);
    clock += 1_001;
    expect(d.store.kvLockDelayed('a')).toBe(false);
  });

  test('Behavior=delete deletes the held keys on destroy', () => {
    const d = setup();
    create(d, 1, { Behavior: 'delete' });
    lock(d, 'l', 1, 'v');
    d.apply({ type: 'session.destroy', id: SID(1) });
    expect(entry(d, 'l')).toBeNull();
  });

  test.each([
    ['a linked check turning critical', (d: Driver) => d.register({ Node: 'n1', Address: '10.0.0.1', SkipNodeUpdate: true, Check: { CheckID: 'serfHealth', Name: 'serf', Status: 'critical' } } as never)],
    ['a linked check deregistered', (d: Driver) => d.deregister({ Node: 'n1', CheckID: 'serfHealth' } as never)],
    ['the node deregistered', (d: Driver) => d.deregister({ Node: 'n1' } as never)],
  ])('%s invalidates the session in the same apply', (_what, change) => {
    const d = setup();
    create(d, 1);
    lock(d, 'l', 1);
    change(d);
    expect(d.store.sessionInfo(SID(1)).value).toBeNull();
    expect(entry(d, 'l')).toMatchObject({ Session: '' });
    expect(d.store.checkInvariants()).toEqual([]);
  });

  test('a warning check or an unrelated check does not invalidate', () => {
    const d = setup();
    create(d, 1, { Checks: ['serfHealth', 'disk'] });
    d.register({ Node: 'n1', Address: '10.0.0.1', SkipNodeUpdate: true, Check: { CheckID: 'other', Name: 'o', Status: 'critical' } } as never);
    expect(d.store.sessionInfo(SID(1)).value).not.toBeNull();
  });

  test('a destroyed session takes its bound prepared queries with it', () => {
    const d = setup();
    create(d, 1);
    const q = {
      ID: 'aaaaaaaa-0000-4000-8000-000000000001',
      Name: 'bound',
      Session: SID(1),
      Token: '',
      Template: { Type: '', Regexp: '', RemoveEmptyTags: false },
      Service: { Service: 'web' },
      DNS: { TTL: '' },
    };
    expect(d.apply({ type: 'query.set', op: 'create', query: q as never })).toEqual({ ID: q.ID });
    d.apply({ type: 'session.destroy', id: SID(1) });
    expect(d.store.queryList().value).toEqual([]);
  });
});

describe('kv.txn', () => {
  const txn = (d: Driver, ops: KvOp[]) => d.apply({ type: 'kv.txn', ops }) as TxnReply;

  test('all ops apply at one index and results follow the ops (values only for reads)', () => {
    const d = setup();
    set(d, 'x', 'old');
    const r = txn(d, [
      { Verb: 'set', Key: 'a', Value: bytes('1') },
      { Verb: 'get', Key: 'x' },
      { Verb: 'cas', Key: 'x', Index: 2, Value: bytes('new') },
      { Verb: 'delete', Key: 'zzz' },
      { Verb: 'check-not-exists', Key: 'nope' },
    ]);
    expect(r.Errors).toBeNull();
    expect(r.Results).toEqual([
      { KV: { LockIndex: 0, Key: 'a', Flags: 0, Value: null, CreateIndex: 3, ModifyIndex: 3 } },
      { KV: { LockIndex: 0, Key: 'x', Flags: 0, Value: Buffer.from('old').toString('base64'), CreateIndex: 2, ModifyIndex: 2 } },
      { KV: { LockIndex: 0, Key: 'x', Flags: 0, Value: null, CreateIndex: 2, ModifyIndex: 3 } },
    ]);
  });

  test('one failing op rolls back every op and reports each error with its index', () => {
    const d = setup();
    set(d, 'x', 'old');
    const r = txn(d, [
      { Verb: 'set', Key: 'a', Value: bytes('1') },
      { Verb: 'cas', Key: 'x', Index: 1, Value: bytes('new') },
      { Verb: 'get', Key: 'missing' },
    ]);
    expect(r).toEqual({
      Results: null,
      Errors: [
        { OpIndex: 1, What: 'failed to set key "x", index is stale' },
        { OpIndex: 2, What: 'key "missing" doesn\'t exist' },
      ],
    });
    expect(entry(d, 'a')).toBeNull();
    expect(Buffer.from(entry(d, 'x')!.Value!).toString()).toBe('old');
  });

  test('later ops see earlier ones; lock and check-session work inside', () => {
    const d = setup();
    create(d, 1);
    const r = txn(d, [
      { Verb: 'lock', Key: 'l', Session: SID(1) },
      { Verb: 'check-session', Key: 'l', Session: SID(1) },
      { Verb: 'delete-tree', Key: '' },
      { Verb: 'check-not-exists', Key: 'l' },
    ]);
    expect(r.Errors).toBeNull();
    expect(d.store.kvList('').value).toEqual([]);
  });

  test('more than 64 ops is refused', () => {
    const d = setup();
    const ops = Array.from({ length: 65 }, (_, i) => ({ Verb: 'set', Key: `k${i}` }) as KvOp);
    expect(errorOf(d.apply({ type: 'kv.txn', ops }))).toBe('Transaction contains too many operations (65 > 64)');
  });

  test('a read-only transaction is answered without a write', () => {
    const d = setup();
    set(d, 'x', 'v');
    const r = d.store.kvTxnRead([{ Verb: 'get', Key: 'x' }, { Verb: 'check-index', Key: 'x', Index: 2 }]);
    expect(r.value.Errors).toBeNull();
    expect(r.value.Results).toHaveLength(2);
    expect(d.store.lastIndex).toBe(2);
  });
});

describe('snapshot', () => {
  test('sessions, KV entries, tombstones, holders and queries survive a restore', () => {
    const d = setup();
    create(d, 1);
    lock(d, 'l', 1, 'v');
    set(d, 'gone', 'x');
    kv(d, { Verb: 'delete', Key: 'gone' });
    const listIndex = d.store.kvList('gone').index;
    const copy = new Driver('dc1');
    copy.store.restore(d.store.snapshot());
    expect(copy.store.sessionList().value).toEqual(d.store.sessionList().value);
    expect(copy.store.kvGet('l').value).toEqual(d.store.kvGet('l').value);
    expect(copy.store.kvList('gone').index).toBe(listIndex);
    expect(copy.store.checkInvariants()).toEqual([]);
    copy.index = d.index;
    copy.apply({ type: 'session.destroy', id: SID(1) });
    expect(copy.store.kvGet('l').value).toMatchObject({ Session: '' });
  });
});
