// The body of /v1/txn: an array of operations, each with exactly one of `KV` ({Verb, Key, Value
// (base64), Flags, Index, Session}), `Node` ({Verb, Node}), `Service` ({Verb, Node, Service}) or
// `Check` ({Verb, Check}) — Consul 1.4's TxnOp, keys case-insensitive as Consul decodes them.
// Flags is a Go uint64: the body is parsed with exact integers (http/json-text.ts), so a value
// beyond 2^53 arrives as a BigInt, which JSON Schema cannot type; the body check checks its range.
import { Type, type Static } from '@sinclair/typebox';
import { asUint64 } from '@registry/store';
import { Int, NullableObj, Obj, Opt, OneOf, OrNull, Str, StrMap } from './body-fields';
import { checkFields, serviceFields } from './catalog';
import { withCheck } from './validator';

const index = () => Int({ minimum: 0 });

export const txnSchema = withCheck(
  Type.Array(
    Obj({
      KV: NullableObj({
        Verb: Str(),
        Key: Str(),
        Value: OneOf<string | null>('string', 'null'),
        // An integer or a BigInt: range-checked by the body check.
        Flags: Opt(Type.Unsafe<number | bigint | null>({})),
        Index: index(),
        Session: Str(),
      }),
      Node: NullableObj({
        Verb: Str(),
        Node: NullableObj({ ID: Str(), Node: Str(), Address: Str(), Datacenter: Str(), TaggedAddresses: StrMap(), Meta: StrMap(), ModifyIndex: index() }),
      }),
      Service: NullableObj({ Verb: Str(), Node: Str(), Service: Opt(OrNull(Obj({ ...serviceFields, ModifyIndex: index() }))) }),
      Check: NullableObj({ Verb: Str(), Check: Opt(OrNull(Obj({ ...checkFields, ModifyIndex: index() }))) }),
    }),
  ),
  (ops) => {
    for (const [i, op] of ops.entries()) {
      const flags = op.KV?.Flags;
      if (flags !== undefined && flags !== null && asUint64(flags) === undefined) {
        return `Request decode failed: operation ${i}: Flags must be an integer from 0 to 18446744073709551615`;
      }
    }
    return undefined;
  },
);
export type TxnOpBody = Static<typeof txnSchema>[number];
export type TxnKvBody = NonNullable<TxnOpBody['KV']>;
