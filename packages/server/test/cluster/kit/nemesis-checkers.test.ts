import fc from 'fast-check';
import { checkCreates, checkSeqRegisters, createViolations, lockOverlaps, seqViolations, Tally, type Hold, type SeqRead, type SeqWrite } from '../support/nemesis-checkers';

describe('checkCreates (fresh keys created with ?cas=0)', () => {
  it('passes when every true key exists, every false or failed key is absent, and unknown ones may be either', () => {
    const v = checkCreates(
      [
        { key: 'a', outcome: 'ok', answer: true },
        { key: 'b', outcome: 'info' },
        { key: 'c', outcome: 'info' },
        { key: 'd', outcome: 'fail' },
      ],
      new Set(['a', 'b']),
    );
    expect(createViolations(v)).toBe(0);
  });

  it('reports a create answered false whose key exists (applied, then denied) and one answered true that is gone', () => {
    const v = checkCreates(
      [
        { key: 'applied-twice', outcome: 'ok', answer: false },
        { key: 'denied', outcome: 'ok', answer: false },
        { key: 'lost', outcome: 'ok', answer: true },
        { key: 'refused', outcome: 'fail' },
      ],
      new Set(['applied-twice', 'refused', 'stranger']),
    );
    expect(v).toEqual({ appliedButFalse: ['applied-twice'], falseAndAbsent: ['denied'], lost: ['lost'], failedButPresent: ['refused'], phantom: ['stranger'] });
    expect(createViolations(v)).toBe(5);
  });

  it('refuses a history that tries a key twice (the keys would not be fresh)', () => {
    expect(() => checkCreates([{ key: 'a', outcome: 'info' }, { key: 'a', outcome: 'ok', answer: true }], new Set())).toThrow(/twice/);
  });
});

describe('checkSeqRegisters (one sequential writer per register, increasing seq)', () => {
  const w = (seq: number, outcome: SeqWrite['outcome']): SeqWrite => ({ seq, outcome });
  const check = (writes: SeqWrite[], final: number | null, reads: SeqRead[] = []) =>
    checkSeqRegisters(new Map([['i', { writes, reads, final }]]));

  it('accepts the last acknowledged seq, or a later one of unknown outcome, as the final value', () => {
    const writes = [w(1, 'ok'), w(2, 'info'), w(3, 'ok'), w(4, 'fail'), w(5, 'info')];
    expect(seqViolations(check(writes, 3))).toBe(0);
    expect(seqViolations(check(writes, 5))).toBe(0);
  });

  it('rejects an older unknown write landing after a newer acknowledged one, and a lost register', () => {
    const writes = [w(1, 'ok'), w(2, 'info'), w(3, 'ok')];
    expect(check(writes, 2).olderThanAcked).toEqual([{ owner: 'i', final: 2, lastAcked: 3 }]);
    expect(check(writes, 1).olderThanAcked).toHaveLength(1);
    expect(check(writes, null).olderThanAcked).toHaveLength(1);
    expect(seqViolations(check([w(1, 'fail'), w(2, 'info')], null))).toBe(0);
  });

  it('rejects a final value that certainly failed or was never sent', () => {
    expect(check([w(1, 'ok'), w(2, 'fail')], 2).phantomFinal).toEqual([{ owner: 'i', final: 2 }]);
    expect(check([w(1, 'ok')], 7).phantomFinal).toHaveLength(1);
  });

  it('rejects a read after an acknowledged write that shows an older seq, nothing, or one not yet sent', () => {
    const writes = [w(1, 'ok'), w(2, 'ok'), w(3, 'info'), w(4, 'ok')];
    const ok: SeqRead[] = [
      { ackedBefore: 1, attemptedBefore: 1, observed: 1 },
      { ackedBefore: 2, attemptedBefore: 3, observed: 3 },
      { ackedBefore: 2, attemptedBefore: 3, observed: 2 },
    ];
    expect(seqViolations(check(writes, 4, ok))).toBe(0);
    const bad: SeqRead[] = [
      { ackedBefore: 2, attemptedBefore: 2, observed: 1 },
      { ackedBefore: 1, attemptedBefore: 1, observed: null },
      { ackedBefore: 1, attemptedBefore: 1, observed: 2 },
    ];
    expect(check(writes, 4, bad).badReads).toHaveLength(3);
  });
});

describe('lockOverlaps', () => {
  const h = (client: number, from: number, to: number): Hold => ({ client, from, to });

  it('accepts holds of different clients one after the other, touching included', () => {
    expect(lockOverlaps([h(1, 1, 5), h(2, 5, 9), h(1, 10, 12), h(3, 13, 20)])).toEqual([]);
  });

  it('reports every pair of different clients holding at once, in any input order', () => {
    const holds = [h(2, 4, 8), h(1, 1, 5), h(3, 7, 9), h(1, 10, 11)];
    const pairs = lockOverlaps(holds).map((o) => [o.a.client, o.b.client]);
    expect(pairs).toEqual([
      [1, 2],
      [2, 3],
    ]);
  });

  it('reports a long hold overlapping several short ones', () => {
    expect(lockOverlaps([h(1, 0, 100), h(2, 10, 20), h(3, 30, 40), h(2, 50, 60)])).toHaveLength(3);
  });

  it('refuses a client holding twice at once, and an interval that ends before it starts', () => {
    expect(() => lockOverlaps([h(1, 1, 5), h(1, 3, 8)])).toThrow(/twice/);
    expect(() => lockOverlaps([h(1, 5, 1)])).toThrow(/before it starts/);
  });

  it('agrees with the quadratic definition on random intervals', () => {
    const hold = fc.record({ client: fc.integer({ min: 0, max: 3 }), from: fc.integer({ min: 0, max: 60 }), len: fc.integer({ min: 0, max: 15 }) });
    fc.assert(
      fc.property(fc.array(hold, { maxLength: 12 }), (raw) => {
        // Keep each client's own holds disjoint, as a real client's are.
        const holds: Hold[] = [];
        for (const r of raw) {
          const candidate = h(r.client, r.from, r.from + r.len);
          if (holds.some((o) => o.client === candidate.client && o.from < candidate.to && candidate.from < o.to)) continue;
          if (holds.some((o) => o.client === candidate.client && (o.from === candidate.from || o.to === candidate.to))) continue;
          holds.push(candidate);
        }
        let expected = 0;
        for (let i = 0; i < holds.length; i++) {
          for (let j = i + 1; j < holds.length; j++) {
            const a = holds[i] as Hold;
            const b = holds[j] as Hold;
            if (a.client !== b.client && a.from < b.to && b.from < a.to) expected++;
          }
        }
        expect(lockOverlaps(holds)).toHaveLength(expected);
      }),
    );
  });
});

describe('Tally', () => {
  it('counts and formats in the given order, then the rest sorted', () => {
    const t = new Tally();
    t.add('b');
    t.add('a', 2);
    t.add('c');
    expect(t.format(['c', 'z'])).toBe('c 1, z 0, a 2, b 1');
  });
});
