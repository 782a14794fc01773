// Stored records hold only JSON-like data (strings, numbers, booleans, null, arrays, plain objects),
// so structural equality and copying can ignore classes, cycles and key order.

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Structural equality of JSON-like values; object key order does not matter, and a key holding
 * `undefined` counts as absent. Allocation-free: every catalog write compares the stored record with
 * the new one (an unchanged registration moves no index), on every server.
 */
export function plainEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const isArray = Array.isArray(a);
  if (isArray !== Array.isArray(b)) return false;
  if (isArray) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!plainEqual(x[i], y[i])) return false;
    return true;
  }
  return sameFields(a as Record<string, unknown>, b as Record<string, unknown>, NO_KEYS);
}

const NO_KEYS: ReadonlySet<string> = new Set();
const RAFT_INDEX_KEYS: ReadonlySet<string> = new Set(['CreateIndex', 'ModifyIndex']);

/** plainEqual of a stored record, its CreateIndex and ModifyIndex left out, and the data a write brings. */
export function sameRecordData(stored: object, data: object): boolean {
  return sameFields(stored as Record<string, unknown>, data as Record<string, unknown>, RAFT_INDEX_KEYS);
}

function sameFields(a: Record<string, unknown>, b: Record<string, unknown>, skip: ReadonlySet<string>): boolean {
  // The defined own keys of `a` must be in `b` with equal values, and `b` must have no others.
  let unmatched = 0;
  for (const k in a) {
    if (!hasOwn.call(a, k) || skip.has(k)) continue;
    const v = a[k];
    if (v === undefined) continue;
    unmatched++;
    if (!hasOwn.call(b, k) || !plainEqual(v, b[k])) return false;
  }
  for (const k in b) if (hasOwn.call(b, k) && !skip.has(k) && b[k] !== undefined) unmatched--;
  return unmatched === 0;
}

/** A deep copy of a JSON-like value, so callers can never reach the store's internal objects. */
export function clonePlain<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => clonePlain(v)) as T;
  // Keys come from users (Meta, headers): on a prototype-less object `__proto__` stays a key.
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v !== undefined) out[k] = clonePlain(v);
  }
  return out as T;
}
