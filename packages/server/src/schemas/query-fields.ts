// The kinds of query field a route declares (TypeBox builders, so each route's ctx.query type is
// derived from its schema): presence flags, one-valued text, lists, and values read by Go's parsers.
// How they are read is query-schema.ts.
import { Type, type TBoolean, type TOptional, type TSchema, type TString, type TArray, type TUnsafe } from '@sinclair/typebox';
import type { Uint64 } from '@registry/store';
import { PRESENCE, REASON, type ParserName, type Reason } from './query-schema';

const reasoned = (reason: Reason | undefined) => (reason === undefined ? {} : { [REASON]: reason });

/** `?name`, `?name=`, `?name=anything`: true; absent: false (Consul's `_, ok := params[name]`). */
export const Flag = (): TBoolean => Type.Boolean({ [PRESENCE]: true });

/** A one-valued text parameter; repeated, the first value counts. */
export const Text = (reason?: Reason): TOptional<TString> => Type.Optional(Type.String(reasoned(reason)));

/** A required, non-empty one-valued text parameter; `reason` answers both absent and empty. */
export const RequiredText = (reason: Reason): TString => Type.String({ minLength: 1, ...reasoned(reason) });

/** A required UUID (8-4-4-4-12 hex digits); `reason` answers absent, empty and malformed. */
export const RequiredUuid = (reason: Reason): TString => Type.String({ format: 'uuid', ...reasoned(reason) });

/** Every value of a repeatable parameter (`?tag=a&tag=b`), in order. */
export const List = (options: { minItems?: number; maxItems?: number; reason?: Reason } = {}): TOptional<TArray<TString>> => {
  const { reason, ...bounds } = options;
  return Type.Optional(Type.Array(Type.String(), { ...bounds, ...reasoned(reason) }));
};

/** A required list (at least one value), of strings or of `item`'s values. */
export function RequiredList<I extends TSchema = TString>(reason: Reason, options: { maxItems?: number; item?: I } = {}): TArray<I> {
  const { item, ...bounds } = options;
  return Type.Array((item ?? Type.String()) as I, { minItems: 1, ...bounds, ...reasoned(reason) });
}

/** A value read by one of Go's parsers (query-schema.ts PARSERS); `emptyAs`: what `?name=` means. */
function parsed<T>(parser: ParserName, reason: Reason, emptyAs?: T): TOptional<TUnsafe<T>> {
  return Type.Optional(Type.Unsafe<T>({ type: 'string', parse: parser, ...(emptyAs === undefined ? {} : { emptyAs }), ...reasoned(reason) }));
}

/** strconv.ParseUint, as a JavaScript number (refused beyond 2^53-1). */
export const Uint = (reason: Reason) => parsed<number>('uint', reason);
/** A Raft index (`?index`, `?cas`): any Go uint64; beyond 2^53 a number above every reachable index. */
export const Index = (reason: Reason) => parsed<number>('index', reason);
/** strconv.Atoi; `emptyAs` is the value of an empty `?name=`. */
export const Int = (reason: Reason, emptyAs?: number) => parsed<number>('int', reason, emptyAs);
/** A Go uint64, exact beyond 2^53 (then a BigInt). */
export const Uint64Field = (reason: Reason) => parsed<Uint64>('uint64', reason);
/** A Go duration in milliseconds; `nonNegative` refuses a negative one. */
export const Duration = (reason: Reason, nonNegative = false) => parsed<number>(nonNegative ? 'wait' : 'duration', reason);
/** strconv.ParseBool; `emptyAs` is the value of an empty `?name=`. */
export const GoBool = (reason: Reason, emptyAs?: boolean) => parsed<boolean>('bool', reason, emptyAs);

/** One of a fixed set of words, each standing for a value (`caseless`: compared in lower case). */
export function Words<T>(words: Record<string, T>, reason: Reason, caseless = false): TOptional<TUnsafe<T>> {
  return Type.Optional(RequiredWords(words, reason, caseless));
}

/** Words, and the parameter must be there. */
export function RequiredWords<T>(words: Record<string, T>, reason: Reason, caseless = false): TUnsafe<T> {
  return Type.Unsafe<T>({ type: 'string', words, ...(caseless ? { caseless } : {}), ...reasoned(reason) });
}
