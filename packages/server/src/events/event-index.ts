// The index of GET /v1/event/list, as Consul's agent makes it: not a Raft index but the last listed
// event's ID folded to 64 bits (uuidToUint64: the UUID's high and low halves XORed), 1 when the
// list is empty. Go's `watch` package (type "event") remembers that value and, at each wake, drops
// every event up to the one whose ID folds to it; with a Raft index nothing matched, and every
// event already seen was delivered again (issue #29 item 8). Such an index is not monotonic, so a
// blocking list waits while the index *equals* the client's, not while it is below it.

/** Consul's uuidToUint64: hex digits 0–16 (without dashes) XOR hex digits 16–32. */
export function eventIndex(lastEventId: string | undefined): bigint {
  if (lastEventId === undefined) return 1n;
  const hex = lastEventId.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) return 1n;
  const v = BigInt(`0x${hex.slice(0, 16)}`) ^ BigInt(`0x${hex.slice(16)}`);
  // An index of 0 means "do not block" to every client: never answer it.
  return v === 0n ? 1n : v;
}

/** `?index=` exactly as sent (a uint64 may exceed 2^53), 0 when absent. */
export function exactIndexParam(rawQuery: string): bigint {
  const raw = new URLSearchParams(rawQuery).get('index');
  return raw !== null && /^\d{1,20}$/.test(raw) ? BigInt(raw) : 0n;
}
