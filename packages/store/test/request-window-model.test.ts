// The dedup window against a plain model of it: requests from several proposers (ids as the RPC
// layer makes them, and ids of other shapes), duplicates, age and count eviction, snapshots taken
// and restored mid-way. The window keeps ids as proposer lanes and sequence numbers in a hash table
// of its own; whatever it does inside, it must answer exactly as "the last maxEntries requests
// younger than maxAgeMs, one record per id, with their first results" would.
import { unpack } from 'msgpackr';
import { CommandError, decodeEntry, encodeEntry, REQUEST_WINDOW, Store, type Command } from '@registry/store';

const put = (key: string): Command => ({ type: 'kv.apply', op: { Verb: 'set', Key: key, Value: new TextEncoder().encode('v'), Flags: 0 } });
const bad = { type: 'session.create', session: { ID: 's', Node: 'nowhere' } } as unknown as Command;

/** A small deterministic PRNG, so a failure replays. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

/** The window's meaning, written the obvious way. */
class WindowModel {
  readonly rows: { id: string; at: number; refused: boolean }[] = [];

  record(id: string, at: number, refused: boolean): void {
    if (id.includes('\n')) return;
    const i = this.rows.findIndex((r) => r.id === id);
    if (i >= 0) this.rows.splice(i, 1);
    this.rows.push({ id, at, refused });
    while (this.rows.length > 0 && (this.rows.length > REQUEST_WINDOW.maxEntries || this.rows[0].at < at - REQUEST_WINDOW.maxAgeMs)) this.rows.shift();
  }

  get(id: string): { refused: boolean } | undefined {
    return this.rows.find((r) => r.id === id);
  }
}

describe('the dedup window answers as its model does', () => {
  test('several proposers, foreign ids, duplicates, eviction by age, snapshots mid-way', () => {
    const rand = prng(20261124);
    const prefixes = ['AbCdEfGh', 'x-Y_z012', 'QQQQQQQQ', 'p'];
    const seqs = prefixes.map(() => 0);
    let store = new Store();
    const model = new WindowModel();
    const issued: string[] = [];
    let at = 1_000;
    for (let index = 1; index <= 6_000; index++) {
      at += Math.floor(rand() * 60); // 6,000 requests over ~180 s: the age bound evicts
      const r = rand();
      let id: string;
      let resent = false;
      if (r < 0.05 && issued.length > 0) {
        id = issued[Math.floor(rand() * issued.length)]; // a copy, marked or not
        resent = rand() < 0.7;
      } else if (r < 0.12) {
        id = ['r', 'old-format-', 'a.0', 'a.01', 'b.Z', 'u.é', ''][Math.floor(rand() * 7)] + String(index); // not <prefix>.<base36>
      } else {
        const p = Math.floor(rand() * prefixes.length);
        seqs[p] += 1 + (rand() < 0.1 ? Math.floor(rand() * 50) : 0); // gaps: writes refused before proposing
        id = `${prefixes[p]}.${seqs[p].toString(36)}`;
      }
      issued.push(id);
      const refuse = rand() < 0.05;
      const seen = resent ? model.get(id) : undefined;
      const result = store.apply(index, refuse ? bad : put(`k${index % 17}`), { id, at, ...(resent ? { resent: true } : {}) });
      if (seen) {
        // A re-sent copy of a request in the window answers its first result and is not recorded again.
        expect(result instanceof CommandError).toBe(seen.refused);
      } else {
        model.record(id, at, result instanceof CommandError);
      }
      if (index % 1_500 === 0) {
        expect(store.checkInvariants()).toEqual([]);
        const copy = new Store();
        copy.restore(store.snapshot());
        expect(copy.checkInvariants()).toEqual([]);
        store = copy;
      }
    }
    expect(model.rows.length).toBeGreaterThan(1_000);
    expect(model.rows.length).toBeLessThan(6_000);
    for (const id of new Set(issued)) {
      const want = model.get(id);
      const got = store.appliedRequest(id);
      expect({ id, inWindow: got !== undefined }).toEqual({ id, inWindow: want !== undefined });
      if (want && got) expect(got.result instanceof CommandError).toBe(want.refused);
    }
    expect(store.checkInvariants()).toEqual([]);
  });

  test('a proposer whose requests all left the window is forgotten, and comes back if it is seen again', () => {
    const store = new Store();
    let index = 0;
    for (let p = 0; p < 50; p++) {
      // A restarted process has a new prefix each time: 50 of them, each aged out by the next.
      for (let s = 1; s <= 3; s++) store.apply(++index, put('k'), { id: `proc${p}.${s}`, at: p * (REQUEST_WINDOW.maxAgeMs + 1) });
    }
    expect(store.appliedRequest('proc0.1')).toBeUndefined();
    expect(store.appliedRequest('proc48.3')).toBeUndefined();
    expect(store.appliedRequest('proc49.3')).toEqual({ result: true });
    store.apply(++index, put('k'), { id: 'proc0.1', at: 50 * (REQUEST_WINDOW.maxAgeMs + 1) });
    expect(store.appliedRequest('proc0.1')).toEqual({ result: true });
    expect(store.checkInvariants()).toEqual([]);
  });

  test('ids that read as the same number are different requests, and a snapshot keeps every id as it was', () => {
    const store = new Store();
    const ids = ['a.1', 'a.01', 'a.001', 'a.A', 'a.a', 'a.zzzzzzzzzz', 'a.zzzzzzzzzzz', 'a.', '.1', 'a.b.1', 'a. 1'];
    ids.forEach((id, i) => store.apply(i + 1, i === 1 ? bad : put('k'), { id, at: 1 }));
    const snap = unpack(store.snapshot()) as { state: { requests: { ids: string } } };
    expect(snap.state.requests.ids.split('\n')).toEqual(ids);
    const copy = new Store();
    copy.restore(store.snapshot());
    for (const s of [store, copy]) {
      expect(s.appliedRequest('a.1')).toEqual({ result: true });
      expect(s.appliedRequest('a.01')!.result).toBeInstanceOf(CommandError);
      expect(s.appliedRequest('a.0001')).toBeUndefined();
      expect(s.appliedRequest('a.B')).toBeUndefined();
      expect(s.checkInvariants()).toEqual([]);
    }
  });
});

describe('stamped entries decode the same by their fast path and in full', () => {
  const cmd: Command = { type: 'catalog.register', req: { Datacenter: 'dc1', Node: 'bench-0042', Address: '10.1.0.42', Service: { Service: 'bench', Port: 8080, Tags: ['v1'] } } } as Command;

  test.each([
    ['a usual id and wall-clock stamp', { id: 'AbCdEfGh.2s', at: 1_795_000_000_123 }],
    ['a re-sent copy', { id: 'AbCdEfGh.2s', at: 1_795_000_000_123, resent: true }],
    ['a small-integer stamp (not float64)', { id: 'x.1', at: 5 }],
    ['a fractional stamp', { id: 'x.1', at: 1.5 }],
    ['a non-ASCII id', { id: 'é.1', at: 1_795_000_000_123 }],
    ['an id of 31 bytes', { id: 'a'.repeat(29) + '.1', at: 1_795_000_000_123 }],
    ['an id of 40 bytes (str8)', { id: 'a'.repeat(38) + '.1', at: 1_795_000_000_123 }],
    ['an empty id', { id: '', at: 1_795_000_000_123 }],
  ])('%s', (_name, request) => {
    expect(decodeEntry(encodeEntry({ cmd, request }))).toEqual({ cmd, request });
  });

  test('commands whose bytes end like a stamp still decode as what they are', () => {
    // A bare command, and stamped ones whose command's last bytes are ASCII and 0xcb-like.
    const tricky: Command = { type: 'kv.apply', op: { Verb: 'set', Key: 'a\u00cbb', Value: new Uint8Array([0xa3, 0x41, 0x42, 0x43, 0xcb]), Flags: 0 } } as Command;
    expect(decodeEntry(encodeEntry({ cmd: tricky }))).toEqual({ cmd: tricky });
    expect(decodeEntry(encodeEntry({ cmd: tricky, request: { id: 'ABC.1', at: 1_795_000_000_123 } }))).toEqual({ cmd: tricky, request: { id: 'ABC.1', at: 1_795_000_000_123 } });
    // Corrupted entries are refused as before, not half-read.
    const good = encodeEntry({ cmd, request: { id: 'AbCdEfGh.2s', at: 1_795_000_000_123 } });
    expect(() => decodeEntry(good.subarray(0, good.length - 3))).toThrow(/not a state machine command/);
    const noCmd = Uint8Array.from(good);
    noCmd[1] = 0xc0; // the command becomes nil followed by garbage
    expect(() => decodeEntry(noCmd)).toThrow(/not a state machine command/);
  });
});
