// KV answers carry Flags as Go uint64: the lock and semaphore flag values are above 2^53, which
// JSON.parse would round. Integers beyond 2^53 are read as BigInt and written back as digits.
import { parse, parseNumberAndBigInt, stringify } from 'lossless-json';

export interface KvPair {
  Key: string;
  Flags: number | bigint;
  Value: string | null;
  Session?: string;
  LockIndex: number;
  CreateIndex: number;
  ModifyIndex: number;
}

export function parseKv<T = unknown>(text: string): T {
  return (text ? parse(text, null, parseNumberAndBigInt) : null) as T;
}

export function stringifyKv(value: unknown, indent?: string | number): string {
  return stringify(value, null, indent) ?? 'null';
}
