// Commands arrive as msgpack-decoded data that the HTTP layer has already shaped, but the state
// machine must not trust it: a wrongly typed field has to become a CommandError, never a crash
// halfway through a mutation. These readers check one field each and throw a Rejection.
import { Rejection } from './command-error';

export type PlainObject = Record<string, unknown>;

function describe(path: string, expected: string): Rejection {
  return new Rejection(`Invalid field ${path}: expected ${expected}`);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** The value as a plain object; null and undefined give undefined. */
export function optObject(value: unknown, path: string): PlainObject | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw describe(path, 'an object');
  return value as PlainObject;
}

/** A string field; missing or null is "". */
export function str(o: PlainObject, key: string, path: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw describe(join(path, key), 'a string');
  return v;
}

/** A boolean field; missing or null is false. */
export function bool(o: PlainObject, key: string, path: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw describe(join(path, key), 'a boolean');
  return v;
}

/** A finite number field, or undefined when missing or null. */
export function optNumber(o: PlainObject, key: string, path: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw describe(join(path, key), 'a number');
  return v;
}

/** An integer field; missing or null is 0. */
export function int(o: PlainObject, key: string, path: string): number {
  const v = optNumber(o, key, path);
  if (v === undefined) return 0;
  if (!Number.isInteger(v)) throw describe(join(path, key), 'an integer');
  return v;
}

/** A map of string to string; missing or null is null (Consul distinguishes a null map from {}). */
export function strMap(o: PlainObject, key: string, path: string): Record<string, string> | null {
  const obj = optObject(o[key], join(path, key));
  if (obj === undefined) return null;
  const out: Record<string, string> = Object.create(null); // users' keys: no prototype to reach
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v !== 'string') throw describe(`${join(path, key)}.${k}`, 'a string');
    out[k] = v;
  }
  return out;
}

/** A list of strings; missing or null is []. */
export function strList(o: PlainObject, key: string, path: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw describe(join(path, key), 'an array of strings');
  return v.map((item, i) => {
    if (typeof item !== 'string') throw describe(`${join(path, key)}[${i}]`, 'a string');
    return item;
  });
}

/** A list of arbitrary values (kept opaque); missing or null is undefined. */
export function optList(o: PlainObject, key: string, path: string): unknown[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw describe(join(path, key), 'an array');
  return v;
}
