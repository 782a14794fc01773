// KV Flags beyond 2^53 (Go uint64) through the Store's API: kept exact as BigInts, canonical (a BigInt
// only above 2^53-1), refused outside [0, 2^64-1], and carried through a snapshot and its restore.
import { CommandError, MAX_UINT64, Store, asUint64, parseUint64, type KvOp } from '@registry/store';
import { Driver } from './support/driver';

const BIG = 16210313421097356768n;
const kv = (d: Driver, op: KvOp) => d.apply({ type: 'kv.apply', op: op as never });

test('asUint64 and parseUint64 keep one canonical form per value', () => {
  expect(asUint64(42)).toBe(42);
  expect(asUint64(42n)).toBe(42);
  expect(asUint64(BIG)).toBe(BIG);
  expect(asUint64(MAX_UINT64)).toBe(MAX_UINT64);
  expect(asUint64(MAX_UINT64 + 1n)).toBeUndefined();
  expect(asUint64(-1)).toBeUndefined();
  expect(asUint64(2 ** 60)).toBeUndefined(); // a float beyond 2^53 may already be rounded
  expect(parseUint64('3304740253564472344')).toEqual({ value: 3304740253564472344n });
  expect(parseUint64('18446744073709551616')).toEqual({ problem: 'value out of range' });
  expect(parseUint64('-1')).toEqual({ problem: 'invalid syntax' });
});

test('a kv.apply with flags beyond 2^53 stores them exactly; out of range is a CommandError', () => {
  const d = new Driver('dc1');
  expect(kv(d, { Verb: 'set', Key: 'k', Flags: BIG })).toBe(true);
  expect(d.store.kvGet('k').value?.Flags).toBe(BIG);
  const refused = kv(d, { Verb: 'set', Key: 'k', Flags: MAX_UINT64 + 1n });
  expect(refused).toBeInstanceOf(CommandError);
  expect(d.store.kvGet('k').value?.Flags).toBe(BIG);
});

test('a snapshot and its restore keep the exact flags (both ways of writing a snapshot)', async () => {
  const d = new Driver('dc1');
  kv(d, { Verb: 'set', Key: 'big', Flags: BIG });
  kv(d, { Verb: 'set', Key: 'small', Flags: 7 });
  const whole = new Store({ datacenter: 'dc1' });
  whole.restore(d.store.snapshot());
  expect(whole.kvGet('big').value?.Flags).toBe(BIG);
  expect(whole.kvGet('small').value?.Flags).toBe(7);

  const handle = d.store.openSnapshot();
  kv(d, { Verb: 'set', Key: 'big', Flags: 1 }); // written after the snapshot was opened
  const streamed = new Store({ datacenter: 'dc1' });
  streamed.restore(handle.bytes());
  handle.release();
  expect(streamed.kvGet('big').value?.Flags).toBe(BIG);
  expect(d.store.kvGet('big').value?.Flags).toBe(1);
});
