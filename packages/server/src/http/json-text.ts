// JSON text with exact 64-bit integers. Go's uint64 fields (KV Flags) may exceed 2^53: such values
// are BigInts inside the server, which JSON.parse would round on the way in and JSON.stringify
// refuses on the way out. The native JSON stays the fast path for every other body and answer;
// lossless-json is used only for bodies that may carry such integers and for answers that hold a
// BigInt, writing it as digits (never a float, never a string).
import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';

const INTEGER = /^-?\d+$/;

/** Integers beyond 2^53 become BigInts; every other number is what JSON.parse gives. */
function parseNumber(text: string): number | bigint {
  const n = Number(text);
  return INTEGER.test(text) && !Number.isSafeInteger(n) ? BigInt(text) : n;
}

/** JSON.parse, but integers beyond 2^53 are exact BigInts. The last of duplicate keys wins (as in JSON.parse and Go). */
export function parseExactJson(text: string): unknown {
  return parseLossless(text, null, { parseNumber, onDuplicateKey: ({ newValue }) => newValue });
}

/** `encode(value)`, or when the value holds a BigInt, lossless-json's text with the BigInt as digits. */
export function exactJsonText<T extends string | Buffer>(value: unknown, encode: (v: unknown) => T, space?: number): T | string {
  try {
    return encode(value);
  } catch (err) {
    if (!(err instanceof TypeError) || !/BigInt/i.test(err.message)) throw err;
    return stringifyLossless(value, undefined, space) ?? 'null';
  }
}
