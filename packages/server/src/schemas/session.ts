// The body of PUT /v1/session/create (spec "Session"; consul-behaviour §3.1). LockDelay may be a
// number (seconds below 1000, else nanoseconds) or a duration string; the route interprets it.
import { Type, type Static } from '@sinclair/typebox';
import { NullableList, Obj, OneOf } from './body-fields';

const strOrNull = () => OneOf<string | null>('string', 'null');

export const sessionCreateSchema = Obj({
  Name: strOrNull(),
  Node: strOrNull(),
  Checks: NullableList(Type.String()),
  LockDelay: OneOf<number | string | null>('number', 'string', 'null'),
  Behavior: strOrNull(),
  TTL: strOrNull(),
});
export type SessionCreateBody = Static<typeof sessionCreateSchema>;
