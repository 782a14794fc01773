// The query options every route shares (consul-behaviour §1.6), declared once: each route's query
// schema is one of these fragments plus its own fields (readQuery/writeQuery), and
// http/query-options.ts turns the fragment's part of the typed query into QueryOptions.
import { Type, type TObject, type TProperties } from '@sinclair/typebox';
import { Duration, Flag, Index, List, Text } from './query-fields';

/** What a GET reads: datacenter, token, consistency, blocking, and the common filters. */
export const readOptionFields = {
  dc: Text(),
  token: Text(),
  stale: Flag(),
  consistent: Flag(),
  cached: Flag(),
  max_stale: Duration((v: string) => `Invalid max_stale value "${v}"`),
  wait: Duration('Invalid wait time', true),
  index: Index('Invalid index'),
  near: Text(),
  'node-meta': List(),
  pretty: Flag(),
};

/** What a write reads (Consul's parseDC + parseToken), and `?pretty`. */
export const writeOptionFields = {
  dc: Text(),
  token: Text(),
  pretty: Flag(),
};

/** The fragments alone: the query of a route that declares no fields of its own. */
export const ReadOptionsQuery = Type.Object(readOptionFields);
export const WriteOptionsQuery = Type.Object(writeOptionFields);

/** A GET route's query schema: the shared read options and `fields`. */
export function readQuery<P extends TProperties>(fields: P): TObject<typeof readOptionFields & P> {
  return Type.Object({ ...readOptionFields, ...fields });
}

/** A PUT/POST/DELETE route's query schema: dc, token, pretty and `fields`. */
export function writeQuery<P extends TProperties>(fields: P): TObject<typeof writeOptionFields & P> {
  return Type.Object({ ...writeOptionFields, ...fields });
}
