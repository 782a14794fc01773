import fc from 'fast-check';
import { checkLinearizable, HistoryRecorder, type Operation, type RegisterValue } from '../support/linearizability';

// Small builders so each history reads like a timeline: [invoke, complete].
const read = (process: number, output: RegisterValue, invoke: number, complete: number, key = 'k'): Operation => ({
  process, key, op: 'read', output, invoke, complete, result: 'ok',
});
const write = (process: number, value: RegisterValue, invoke: number, complete: number, key = 'k'): Operation => ({
  process, key, op: 'write', value, invoke, complete, result: 'ok',
});
const cas = (
  process: number, expected: RegisterValue, value: RegisterValue, swapped: boolean, invoke: number, complete: number,
): Operation => ({ process, key: 'k', op: 'cas', expected, value, output: swapped, invoke, complete, result: 'ok' });
const unknownWrite = (process: number, value: RegisterValue, invoke: number): Operation => ({
  process, key: 'k', op: 'write', value, invoke, result: 'info',
});

describe('checkLinearizable on register histories', () => {
  it('accepts a sequential history where every read sees the latest write', () => {
    const history = [read(1, null, 1, 2), write(1, 'a', 3, 4), read(2, 'a', 5, 6), write(2, 'b', 7, 8), read(1, 'b', 9, 10)];
    expect(checkLinearizable(history)).toEqual({ ok: true });
  });

  it('accepts concurrent reads that see either side of an overlapping write', () => {
    const history = [write(1, 'a', 1, 10), read(2, null, 2, 3), read(3, 'a', 4, 5), read(2, 'a', 11, 12)];
    expect(checkLinearizable(history)).toEqual({ ok: true });
  });

  it('accepts two overlapping writes taking effect in the opposite order to their calls', () => {
    const history = [write(1, 'a', 1, 10), write(2, 'b', 2, 11), read(3, 'a', 12, 13)];
    expect(checkLinearizable(history)).toEqual({ ok: true });
  });

  it('treats operations that touch at one instant as concurrent', () => {
    expect(checkLinearizable([write(1, 'a', 1, 5), read(2, null, 5, 6)])).toEqual({ ok: true });
  });

  it('rejects a stale read: a value older than a write that completed before the read began', () => {
    const history = [write(1, 'a', 1, 2), write(1, 'b', 3, 4), read(2, 'a', 5, 6)];
    const result = checkLinearizable(history);
    expect(result).toMatchObject({ ok: false, kind: 'violation', key: 'k' });
    if (!result.ok) expect(result.explanation).toContain('read → "a"');
  });

  it('rejects a lost write: an acknowledged write that a later read does not see', () => {
    const history = [write(1, 'a', 1, 2), read(2, null, 3, 4)];
    expect(checkLinearizable(history)).toMatchObject({ ok: false, kind: 'violation' });
  });

  it('rejects two reads that disagree about the order of two writes', () => {
    // Once one client has seen b after a, nobody may see a again.
    const history = [write(1, 'a', 1, 20), write(2, 'b', 1, 20), read(3, 'a', 2, 3), read(3, 'b', 4, 5), read(4, 'a', 6, 7)];
    expect(checkLinearizable(history)).toMatchObject({ ok: false, kind: 'violation' });
  });

  it('lets an indeterminate write take effect late or never, but not be undone', () => {
    expect(checkLinearizable([unknownWrite(1, 'a', 1), read(2, null, 2, 3), read(2, 'a', 4, 5)])).toEqual({ ok: true });
    expect(checkLinearizable([unknownWrite(1, 'a', 1), read(2, null, 2, 3), read(2, null, 4, 5)])).toEqual({ ok: true });
    expect(checkLinearizable([unknownWrite(1, 'a', 1), read(2, 'a', 2, 3), read(2, null, 4, 5)])).toMatchObject({
      ok: false, kind: 'violation',
    });
  });

  it('does not let an indeterminate write take effect before it was invoked', () => {
    expect(checkLinearizable([read(2, 'a', 1, 2), unknownWrite(1, 'a', 3)])).toMatchObject({ ok: false, kind: 'violation' });
  });

  it('ignores failed writes, and rejects a read that sees a failed write', () => {
    const failed: Operation = { process: 1, key: 'k', op: 'write', value: 'x', invoke: 1, complete: 2, result: 'fail' };
    expect(checkLinearizable([failed, read(2, null, 3, 4)])).toEqual({ ok: true });
    expect(checkLinearizable([failed, read(2, 'x', 3, 4)])).toMatchObject({ ok: false, kind: 'violation' });
  });

  describe('compare-and-set', () => {
    it('accepts one of two racing cas winning and the other reporting a failed comparison', () => {
      const history = [write(1, 0, 1, 2), cas(2, 0, 1, true, 3, 10), cas(3, 0, 2, false, 3, 10), read(1, 1, 11, 12)];
      expect(checkLinearizable(history)).toEqual({ ok: true });
    });

    it('rejects two cas from the same value both succeeding', () => {
      const history = [write(1, 0, 1, 2), cas(2, 0, 1, true, 3, 10), cas(3, 0, 2, true, 3, 10)];
      expect(checkLinearizable(history)).toMatchObject({ ok: false, kind: 'violation' });
    });

    it('rejects a cas that reports a failed comparison when the register held the expected value', () => {
      const history = [write(1, 0, 1, 2), cas(2, 0, 1, false, 3, 4)];
      expect(checkLinearizable(history)).toMatchObject({ ok: false, kind: 'violation' });
    });

    it('lets an indeterminate cas apply when its comparison holds', () => {
      const pending: Operation = { process: 2, key: 'k', op: 'cas', expected: 0, value: 1, invoke: 3, result: 'info' };
      expect(checkLinearizable([write(1, 0, 1, 2), pending, read(3, 1, 4, 5)])).toEqual({ ok: true });
      expect(checkLinearizable([write(1, 5, 1, 2), pending, read(3, 1, 4, 5)])).toMatchObject({ ok: false });
    });
  });

  it('checks keys independently and names the key that is not linearizable', () => {
    const history = [write(1, 'a', 1, 2, 'good'), read(2, 'a', 3, 4, 'good'), write(1, 'a', 1, 2, 'bad'), read(2, 'z', 3, 4, 'bad')];
    expect(checkLinearizable(history)).toMatchObject({ ok: false, kind: 'violation', key: 'bad' });
  });

  it('honours a non-null initial value', () => {
    expect(checkLinearizable([read(1, 'init', 1, 2)], { initial: 'init' })).toEqual({ ok: true });
    expect(checkLinearizable([read(1, null, 1, 2)], { initial: 'init' })).toMatchObject({ ok: false });
  });

  it('gives up with unknown (never ok) when the step budget runs out', () => {
    const writes = Array.from({ length: 12 }, (_, i) => write(i, i, 1, 100));
    const result = checkLinearizable([...writes, read(99, 'never written', 101, 102)], { maxSteps: 50 });
    expect(result).toMatchObject({ ok: false, kind: 'unknown', key: 'k' });
  });

  it('rejects an ok operation without a completion time', () => {
    const broken = { process: 1, key: 'k', op: 'read', output: null, invoke: 1, result: 'ok' } as Operation;
    expect(() => checkLinearizable([broken])).toThrow(/no complete time/);
  });

  describe('on histories generated from an atomic register', () => {
    // Each op gets a random window and a random instant inside it where it
    // takes effect on a real register; such histories are linearizable by
    // construction, and corrupting one read's output breaks them.
    interface Spec { kind: 'read' | 'write' | 'cas'; start: number; length: number; at: number; value: number; expected: number }
    const opArb: fc.Arbitrary<Spec> = fc.record({
      kind: fc.constantFrom('read' as const, 'write' as const, 'cas' as const),
      start: fc.integer({ min: 0, max: 200 }),
      length: fc.integer({ min: 1, max: 60 }),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
      value: fc.integer({ min: 0, max: 3 }),
      expected: fc.integer({ min: 0, max: 3 }),
    });

    function simulate(specs: Spec[]): Operation[] {
      const placed = specs.map((s, i) => ({ s, i, point: s.start + s.at * s.length }));
      const ops: Operation[] = new Array(specs.length);
      let register: RegisterValue = null;
      for (const { s, i } of [...placed].sort((a, b) => a.point - b.point)) {
        const base = { process: i, key: 'k', invoke: s.start, complete: s.start + s.length, result: 'ok' as const };
        if (s.kind === 'read') ops[i] = { ...base, op: 'read', output: register };
        else if (s.kind === 'write') {
          ops[i] = { ...base, op: 'write', value: s.value };
          register = s.value;
        } else {
          const swapped = register === s.expected;
          ops[i] = { ...base, op: 'cas', expected: s.expected, value: s.value, output: swapped };
          if (swapped) register = s.value;
        }
      }
      return ops;
    }

    it('accepts every such history', () => {
      fc.assert(
        fc.property(fc.array(opArb, { minLength: 1, maxLength: 25 }), (specs) => {
          expect(checkLinearizable(simulate(specs))).toEqual({ ok: true });
        }),
        { numRuns: 150 },
      );
    });

    it('rejects such a history once a read reports a value that was never written', () => {
      fc.assert(
        fc.property(fc.array(opArb, { minLength: 1, maxLength: 25 }), fc.nat(), (specs, pick) => {
          const ops = simulate(specs);
          const reads = ops.filter((op) => op.op === 'read');
          fc.pre(reads.length > 0);
          (reads[pick % reads.length] as { output: RegisterValue }).output = 'never written';
          expect(checkLinearizable(ops)).toMatchObject({ ok: false, kind: 'violation' });
        }),
        { numRuns: 100 },
      );
    });
  });
});

describe('HistoryRecorder', () => {
  it('orders events as they were observed and records outputs', () => {
    const recorder = new HistoryRecorder();
    const w = recorder.invoke(1, { op: 'write', key: 'x', value: 'a' });
    const r = recorder.invoke(2, { op: 'read', key: 'x' });
    w.ok();
    r.ok('a');
    const c = recorder.invoke(3, { op: 'cas', key: 'x', expected: 'a', value: 'b' });
    c.ok(true);
    expect(recorder.history()).toEqual([
      { process: 1, op: 'write', key: 'x', value: 'a', invoke: 1, complete: 3, result: 'ok' },
      { process: 2, op: 'read', key: 'x', invoke: 2, complete: 4, result: 'ok', output: 'a' },
      { process: 3, op: 'cas', key: 'x', expected: 'a', value: 'b', invoke: 5, complete: 6, result: 'ok', output: true },
    ]);
    expect(recorder.okCounts()).toEqual({ read: 1, write: 1, cas: 1 });
  });

  it('reports operations still pending as indeterminate', () => {
    const recorder = new HistoryRecorder();
    recorder.invoke(1, { op: 'write', key: 'x', value: 'a' });
    expect(recorder.history()).toEqual([{ process: 1, op: 'write', key: 'x', value: 'a', invoke: 1, result: 'info' }]);
  });

  it('refuses to complete an operation twice', () => {
    const pending = new HistoryRecorder().invoke(1, { op: 'read', key: 'x' });
    pending.ok('a');
    expect(() => pending.fail()).toThrow(/completed twice/);
  });

  it('feeds the checker: a stale read recorded by clients is caught', () => {
    const recorder = new HistoryRecorder();
    recorder.invoke(1, { op: 'write', key: 'x', value: 'old' }).ok();
    recorder.invoke(1, { op: 'write', key: 'x', value: 'new' }).ok();
    recorder.invoke(2, { op: 'read', key: 'x' }).ok('old');
    expect(checkLinearizable(recorder.history())).toMatchObject({ ok: false, kind: 'violation', key: 'x' });
  });
});
