// Go's uint64 in JavaScript (KV Flags). A value up to 2^53-1 is a number, which is what nearly every
// client sends; a larger one is a BigInt, so it is kept exactly (the Go client's lock and semaphore
// flag values are above 2^53). One canonical form per value keeps every server's state, snapshot
// and answers identical: msgpack carries BigInts as 64-bit integers and gives them back as BigInts.

export type Uint64 = number | bigint;

export const MAX_UINT64 = (1n << 64n) - 1n;

/** The canonical form of `v` when it is an integer in [0, 2^64-1], else undefined. */
export function asUint64(v: unknown): Uint64 | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'bigint' || v < 0n || v > MAX_UINT64) return undefined;
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/** Decimal digits (Go's strconv.ParseUint base 10) → a uint64; why it is not one otherwise. */
export function parseUint64(text: string): { value: Uint64 } | { problem: 'invalid syntax' | 'value out of range' } {
  if (!/^\d+$/.test(text)) return { problem: 'invalid syntax' };
  const value = asUint64(BigInt(text));
  return value === undefined ? { problem: 'value out of range' } : { value };
}
