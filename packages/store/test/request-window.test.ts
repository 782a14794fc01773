// The dedup window: a request id applied once answers every later copy with the first result.
import { pack, unpack } from 'msgpackr';
import { CommandError, decodeEntry, encodeCommand, encodeEntry, REQUEST_WINDOW, Store, type Command } from '@registry/store';

const put = (key: string, value = 'v'): Command => ({ type: 'kv.apply', op: { Verb: 'set', Key: key, Value: new TextEncoder().encode(value), Flags: 0 } });
const create = (key: string): Command => ({ type: 'kv.apply', op: { Verb: 'cas', Key: key, Index: 0, Value: null, Flags: 0 } });

describe('entries carry the request identity', () => {
  test('a stamped entry round-trips; a bare command still decodes (logs written before stamps)', () => {
    const cmd = put('a');
    expect(decodeEntry(encodeEntry({ cmd, request: { id: 'x.1', at: 5 } }))).toEqual({ cmd, request: { id: 'x.1', at: 5 } });
    expect(decodeEntry(encodeEntry({ cmd, request: { id: 'x.1', at: 5, resent: true } }))).toEqual({ cmd, request: { id: 'x.1', at: 5, resent: true } });
    // The first stamped form ({c, r, t} maps) still decodes, as possibly re-sent.
    expect(decodeEntry(pack({ c: cmd, r: 'x.1', t: 5 }))).toEqual({ cmd, request: { id: 'x.1', at: 5, resent: true } });
    // A stamped entry costs its id, its stamp and a few bytes more than the bare command.
    expect(encodeEntry({ cmd, request: { id: 'AbCdEfGh.2s', at: Date.now() } }).length).toBeLessThanOrEqual(encodeCommand(cmd).length + 26);
    expect(decodeEntry(encodeCommand(cmd))).toEqual({ cmd });
    expect(decodeEntry(encodeEntry({ cmd }))).toEqual({ cmd });
    expect(() => decodeEntry(encodeEntry({ cmd: 7 as never, request: { id: 'x', at: 1 } }))).toThrow(/not a state machine command/);
  });
});

describe('a request committed twice is applied once', () => {
  test('the copy answers the first result and changes nothing', () => {
    const store = new Store();
    expect(store.apply(1, create('k'), { id: 'r1', at: 1000 })).toBe(true);
    // Without the window the second copy of a `?cas=0` create would answer false.
    expect(store.apply(2, create('k'), { id: 'r1', at: 1001, resent: true })).toBe(true);
    expect(store.kvGet('k').value).toMatchObject({ CreateIndex: 1, ModifyIndex: 1 });
    // A different request with the same command is applied (and refused by the CAS).
    expect(store.apply(3, create('k'), { id: 'r2', at: 1002 })).toBe(false);
    expect(store.checkInvariants()).toEqual([]);
  });

  test('only a re-sent copy looks the window up: a first copy is applied and recorded', () => {
    const store = new Store();
    expect(store.apply(1, create('k'), { id: 'r1', at: 1 })).toBe(true);
    expect(store.appliedRequest('r1')).toEqual({ result: true });
    // A re-sent copy of a request the window never saw (its first copy was lost) is applied.
    expect(store.apply(2, create('j'), { id: 'r2', at: 2, resent: true })).toBe(true);
    expect(store.kvGet('j').value!.CreateIndex).toBe(2);
    expect(store.checkInvariants()).toEqual([]);
  });

  test('a copy not marked as re-sent (never proposed so) is applied, and the window keeps one record per id', () => {
    const store = new Store();
    store.apply(1, put('a'), { id: 'r1', at: 1 });
    store.apply(2, put('b'), { id: 'r2', at: 2 });
    store.apply(3, put('a', 'again'), { id: 'r1', at: 3 });
    expect(store.kvGet('a').value!.ModifyIndex).toBe(3);
    expect(store.checkInvariants()).toEqual([]);
    const copy = new Store();
    copy.restore(store.snapshot());
    expect(copy.checkInvariants()).toEqual([]);
    expect(copy.appliedRequest('r1')).toEqual({ result: true });
  });

  test('a copy does not re-apply over a newer write', () => {
    const store = new Store();
    store.apply(1, put('k', 'old'), { id: 'r1', at: 1 });
    store.apply(2, put('k', 'new'), { id: 'r2', at: 2 });
    store.apply(3, put('k', 'old'), { id: 'r1', at: 3, resent: true });
    expect(new TextDecoder().decode(store.kvGet('k').value!.Value!)).toBe('new');
    expect(store.kvGet('k').value!.ModifyIndex).toBe(2);
  });

  test('a refused request answers the same refusal again', () => {
    const store = new Store();
    const bad = { type: 'session.create', session: { ID: 's', Node: 'nowhere' } } as unknown as Command;
    const first = store.apply(1, bad, { id: 'r', at: 1 });
    expect(first).toBeInstanceOf(CommandError);
    const again = store.apply(2, bad, { id: 'r', at: 2, resent: true });
    expect(again).toBeInstanceOf(CommandError);
    expect((again as CommandError).message).toBe((first as CommandError).message);
  });

  test('the window survives snapshot and restore', () => {
    const store = new Store();
    store.apply(1, create('k'), { id: 'r1', at: 1 });
    const copy = new Store();
    copy.restore(store.snapshot());
    expect(copy.appliedRequest('r1')).toEqual({ result: true });
    expect(copy.apply(2, create('k'), { id: 'r1', at: 2, resent: true })).toBe(true);
    expect(copy.kvGet('k').value!.ModifyIndex).toBe(1);
  });

  test('a full window survives snapshot and restore with every result and refusal in place', () => {
    const store = new Store();
    const bad = { type: 'session.create', session: { ID: 's', Node: 'nowhere' } } as unknown as Command;
    const n = REQUEST_WINDOW.maxEntries + 50;
    for (let i = 1; i <= n; i++) store.apply(i, i % 1000 === 0 ? bad : i % 7 === 0 ? create(`c${i % 3}`) : put('k'), { id: `p.${i.toString(36)}`, at: i });
    const copy = new Store();
    copy.restore(store.snapshot());
    expect(copy.checkInvariants()).toEqual([]);
    expect(copy.appliedRequest(`p.${(50).toString(36)}`)).toBeUndefined();
    for (const i of [51, 700, 7000, 14_000, n]) expect(copy.appliedRequest(`p.${i.toString(36)}`)).toEqual(store.appliedRequest(`p.${i.toString(36)}`));
    const refused = copy.appliedRequest(`p.${(2000).toString(36)}`)!.result;
    expect(refused).toBeInstanceOf(CommandError);
    expect((refused as CommandError).message).toBe((store.appliedRequest(`p.${(2000).toString(36)}`)!.result as CommandError).message);
    // Both go on evicting the same requests.
    store.apply(n + 1, put('k'), { id: 'next', at: n + 1 });
    copy.apply(n + 1, put('k'), { id: 'next', at: n + 1 });
    expect(copy.appliedRequest(`p.${(51).toString(36)}`)).toBeUndefined();
    expect(store.appliedRequest(`p.${(51).toString(36)}`)).toBeUndefined();
    expect(copy.appliedRequest(`p.${(52).toString(36)}`)).toBeDefined();
  });

  test("a transaction's rows are answered whole to a re-sent copy, before and after a snapshot, and snapshot as they were applied", () => {
    const txn = (first: number): Command => ({
      type: 'txn',
      ops: [first, first + 1].flatMap((i) => [
        { Node: { Verb: 'set', Node: { Node: `n${i}`, Address: `10.0.0.${i}`, Meta: { rack: 'r1' } } } },
        { Service: { Verb: 'set', Node: `n${i}`, Service: { ID: 'web', Service: 'web', Port: 80, Tags: ['v1'] } } },
        { Check: { Verb: 'set', Check: { Node: `n${i}`, CheckID: 'alive', Name: 'alive', Status: 'passing', ServiceID: 'web', Output: 'ok' } } },
      ]),
    } as Command);
    const store = new Store();
    const first = store.apply(1, txn(1), { id: 't.1', at: 1 }) as { Results: unknown[]; Errors: unknown };
    expect(first.Errors).toBeNull();
    expect(first.Results).toHaveLength(6);
    const answered = JSON.parse(JSON.stringify(first));
    // The first copy's rows (index 1), not a second application's (index 3).
    store.apply(2, put('k'), { id: 't.2', at: 2 });
    expect(JSON.parse(JSON.stringify(store.apply(3, txn(1), { id: 't.1', at: 3, resent: true })))).toEqual(answered);
    expect(store.catalogNode('n1').value?.Node).toMatchObject({ CreateIndex: 1, ModifyIndex: 1 });
    // A lookup hands out its own copy: changing one answer does not change the next.
    (store.appliedRequest('t.1')!.result as { Results: unknown[] }).Results.length = 0;
    expect(JSON.parse(JSON.stringify(store.appliedRequest('t.1')!.result))).toEqual(answered);

    const bytes = store.snapshot();
    const held = unpack(bytes) as { state: { requests: { outcomes: [number, { value: unknown }][] } } };
    expect(JSON.parse(JSON.stringify(held.state.requests.outcomes[0]))).toEqual([1, { value: answered }]);
    const copy = new Store();
    copy.restore(bytes);
    // The restored window writes the same bytes again.
    expect(Buffer.from(copy.snapshot()).equals(Buffer.from(bytes))).toBe(true);
    expect(JSON.parse(JSON.stringify(copy.apply(4, txn(1), { id: 't.1', at: 4, resent: true })))).toEqual(answered);
    expect(copy.checkInvariants()).toEqual([]);
  });

  test('a window snapshotted one row per request (before the columnar form) still restores', () => {
    const old = new Store();
    old.apply(1, create('k'), { id: 'r1', at: 1 });
    const snap = unpack(old.snapshot()) as { state: { requests: unknown } };
    expect(snap.state.requests).not.toBeInstanceOf(Array);
    snap.state.requests = [['r1', 1, 1, { value: true }]];
    const copy = new Store();
    copy.restore(pack(snap));
    expect(copy.appliedRequest('r1')).toEqual({ result: true });
    expect(copy.apply(2, create('k'), { id: 'r1', at: 2, resent: true })).toBe(true);
  });

  test('the latest stamp applied (where the next leader\'s log clock continues) survives a restore, from the columnar and the one-row-per-request form', () => {
    const store = new Store();
    expect(store.latestRequestStamp()).toBe(0);
    store.apply(1, put('a'), { id: 'r1', at: 1_700_000_000_500.25 });
    store.apply(2, put('b'), { id: 'r2', at: 1_700_000_000_000 }); // an older leader's wall-clock stamp
    expect(store.latestRequestStamp()).toBe(1_700_000_000_500.25);
    const copy = new Store();
    copy.restore(store.snapshot());
    expect(copy.latestRequestStamp()).toBe(1_700_000_000_500.25);
    const snap = unpack(store.snapshot()) as { state: { requests: unknown } };
    snap.state.requests = [['r1', 1, 1_700_000_000_500.25, { value: true }], ['r2', 2, 1_700_000_000_000, { value: true }]];
    const rows = new Store();
    rows.restore(pack(snap));
    expect(rows.latestRequestStamp()).toBe(1_700_000_000_500.25);
  });

  test('requests older than the window age out by the proposers\' stamps, not this server\'s clock', () => {
    const store = new Store();
    store.apply(1, put('a'), { id: 'old', at: 0 });
    store.apply(2, put('b'), { id: 'recent', at: REQUEST_WINDOW.maxAgeMs });
    expect(store.appliedRequest('old')).toBeDefined();
    store.apply(3, put('c'), { id: 'newest', at: REQUEST_WINDOW.maxAgeMs + 1 });
    expect(store.appliedRequest('old')).toBeUndefined();
    expect(store.appliedRequest('recent')).toBeDefined();
    expect(store.checkInvariants()).toEqual([]);
  });

  test(`at most ${REQUEST_WINDOW.maxEntries} requests are kept, oldest first out`, () => {
    const store = new Store();
    const n = REQUEST_WINDOW.maxEntries + 10;
    const cmd = put('k');
    for (let i = 1; i <= n; i++) store.apply(i, cmd, { id: `r${i}`, at: 1 });
    expect(store.appliedRequest('r10')).toBeUndefined();
    expect(store.appliedRequest('r11')).toBeDefined();
    expect(store.appliedRequest(`r${n}`)).toBeDefined();
  });

  test('commands without a stamp (older logs) are applied as before', () => {
    const store = new Store();
    expect(store.apply(1, create('k'))).toBe(true);
    expect(store.apply(2, create('k'))).toBe(false);
  });
});
