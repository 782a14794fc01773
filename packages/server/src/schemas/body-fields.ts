// The kinds of field a request body declares (TypeBox builders, so a route's ctx.body type is
// derived from its schema, as ctx.query's is: query-fields.ts). Every field of a body is optional
// (Consul decodes into a fresh struct: what is left out takes Go's zero value), and a field that
// may be null lists 'null' among its JSON types rather than being an anyOf, so that ajv's message
// for a wrong type stays one line naming the types ("must be object,null"). How a body is read is
// validator.ts.
import { Kind, OptionalKind, Type, type Static, type TObject, type TOptional, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** A JSON type name, as a schema lists it (ajv's messages name them in the order given). */
type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';

/** The field may be left out. */
export const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);

export const Str = () => Type.Optional(Type.String());
export const Bool = () => Type.Optional(Type.Boolean());
export const Int = (options: { minimum?: number } = {}) => Type.Optional(Type.Integer(options));
export const Num = () => Type.Optional(Type.Number());

/** `schema`, or null: the same JSON schema with 'null' added to its type. */
export function OrNull<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const copy = { ...schema } as Record<string | symbol, unknown>;
  delete copy[Kind];
  delete copy[OptionalKind];
  return Type.Unsafe<Static<T> | null>({ ...copy, type: [schema.type as JsonType, 'null'] });
}

/** A value of any of `types` (in this order), typed as T. */
export const OneOf = <T>(...types: JsonType[]): TOptional<TUnsafe<T>> => Type.Optional(Type.Unsafe<T>({ type: types }));

/** An object whose declared fields are all optional (keys canonicalised: canonical-keys.ts). */
export const Obj = <P extends TProperties>(properties: P, options: { additionalProperties?: boolean } = {}): TObject<P> =>
  Type.Object(properties, options);

/** Obj or null, optional. */
export const NullableObj = <P extends TProperties>(properties: P) => Type.Optional(OrNull(Type.Object(properties)));

/** A list of `item`, or null, optional. */
export const NullableList = <T extends TSchema>(item: T) => Type.Optional(OrNull(Type.Array(item)));

/** A free-form map (its keys are the user's, not canonicalised) of `value`s, or null, optional. */
export const NullableMap = <T extends TSchema>(value: T) =>
  Type.Optional(Type.Unsafe<Record<string, Static<T>> | null>({ type: ['object', 'null'], additionalProperties: value }));

/** A free-form map of strings (Meta, NodeMeta, TaggedAddresses), or null, optional. */
export const StrMap = () => NullableMap(Type.String());

/** Any object (an upstream), not walked, not typed further. */
export const AnyObject = () => Type.Unsafe<Record<string, unknown>>({ type: 'object' });

/** A free-form object (a proxy's Config), or null; not walked, not typed further. */
export const AnyMap = () => Type.Optional(Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'] }));
