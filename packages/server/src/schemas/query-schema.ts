// ajv for a route's query string and path parameters: compiled once per schema, then run on every
// request. A query arrives as strings (node:querystring: a repeated name is an array), and Consul
// reads it with Go's parsers; three steps turn it into the typed object the route's schema names:
//   1. one pre-step, over the names sent that the schema declares (others are ignored, as Consul
//      ignores them): a presence flag (`?recurse`, `?stale`) is true when the name is there with
//      any value or none, false when absent; a one-valued name takes the first of repeated values
//      (Go's url.Values.Get); a list keeps them all;
//   2. ajv with `coerceTypes: 'array'` (a single value of a list becomes a one-item list);
//   3. the `parse` and `words` keywords (query-fields.ts) replace a string by its value with Go's
//      exact grammar (ajv's own number coercion takes " 12" and "1e3", strconv does not).
// Steps 2–3 are skipped when only flags (or nothing) were sent and nothing is required: the common
// read pays for the pre-step alone. A value that fails answers 400 with the reason its field
// carries (REASON), in Consul's words. Path parameters (compileParams) are one string each and go
// through ajv alone.
import { Ajv, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Static, TObject } from '@sinclair/typebox';
import { parseDurationMs, parseUint64 } from '@registry/store';
import { isUUID } from '@registry/acl';
import { badRequest } from '../errors';

/** Why a field is refused: a fixed text, or one made from the value sent (undefined: not sent). */
export type Reason = string | ((value: any) => string);
/** Key of a field's 400 text (a symbol: ajv does not see it). */
export const REASON = Symbol('reason');
/** Key that marks a presence flag: true when the name is in the query, whatever its value. */
export const PRESENCE = Symbol('presence');

export type ParserName = 'uint' | 'index' | 'int' | 'uint64' | 'duration' | 'wait' | 'bool';

/** Go's parsers, by name: the string → its value, or undefined when Go would refuse it. */
const PARSERS: Record<ParserName, (text: string) => unknown> = {
  // strconv.ParseUint into a JavaScript number: digits only, and exact (≤ 2^53-1).
  uint: (t) => (/^\d+$/.test(t) && Number.isSafeInteger(Number(t)) ? Number(t) : undefined),
  // A Raft index as Go's uint64 (`?index=`, `?cas=`): anything strconv.ParseUint(s, 10, 64) takes.
  // Beyond 2^53 it becomes 2^53-1, above every index this cluster can reach, which is all such an
  // index can mean: a CAS with it never matches and a blocking query with it returns at once, as in
  // Consul (issue #29: the Go client's ?cas= of a large index was refused with a 400).
  index: (t) => {
    const parsed = parseUint64(t);
    return 'problem' in parsed ? undefined : Math.min(Number(parsed.value), Number.MAX_SAFE_INTEGER);
  },
  // strconv.Atoi.
  int: (t) => (/^[+-]?\d+$/.test(t) && Number.isSafeInteger(Number(t)) ? Number(t) : undefined),
  // strconv.ParseUint(s, 10, 64), kept exact beyond 2^53 (a BigInt there).
  uint64: (t) => {
    const parsed = parseUint64(t);
    return 'problem' in parsed ? undefined : parsed.value;
  },
  // time.ParseDuration, in milliseconds.
  duration: (t) => parseDurationMs(t),
  // time.ParseDuration, in milliseconds, not negative.
  wait: (t) => {
    const ms = parseDurationMs(t);
    return ms === undefined || ms < 0 ? undefined : ms;
  },
  // strconv.ParseBool.
  bool: (t) => GO_BOOLS.get(t),
};
const GO_BOOLS = new Map<string, boolean>([
  ...['1', 't', 'T', 'TRUE', 'true', 'True'].map((w) => [w, true] as [string, boolean]),
  ...['0', 'f', 'F', 'FALSE', 'false', 'False'].map((w) => [w, false] as [string, boolean]),
]);

/** Where a modifying keyword writes its value (ajv's data context). */
interface DataCxt {
  parentData: any;
  parentDataProperty: string | number;
}

/**
 * Ajv options for instances that compile only this tree's schemas (TypeBox-built, exercised by the
 * tests): no meta-schema is added and no schema is checked against one. Checking is what an
 * instance's first compile spent most on — the meta-schema's own validator built and run, 47–52 ms
 * against 10–16 — in one turn of a server's loop, on the first request that needs a schema after a
 * start (62–82 ms for the first catalog registration of a dev server; 128 ms, profiled, in a wiped
 * follower's install at 1 GiB: issue #34).
 */
export const OWN_SCHEMAS_ONLY = { meta: false, validateSchema: false } as const;

/** Made by the first query or params checked: an idle agent holds no ajv instance of its own (issue #30). */
let queryAjv: Ajv | undefined;

function ajv(): Ajv {
  if (queryAjv) return queryAjv;
  const made = new Ajv({ allErrors: false, strict: false, coerceTypes: 'array', ...OWN_SCHEMAS_ONLY });

  // `format: 'uuid'` is the one UUID check of the tree (@registry/acl), not a second regex.
  made.addFormat('uuid', isUUID);

  // `parse: <name>` replaces the string by what Go's parser of that name makes of it (`emptyAs`, when
  // the schema has it, is the value of an empty string: Consul reads `?limit=` as no limit).
  made.addKeyword({
    keyword: 'parse',
    type: 'string',
    schemaType: 'string',
    modifying: true,
    errors: false,
    validate(name: string, data: string, parentSchema?: AnySchemaObject, cxt?: DataCxt) {
      if (!cxt) return false;
      let value: unknown;
      if (data === '' && parentSchema && 'emptyAs' in parentSchema) value = parentSchema.emptyAs;
      else value = PARSERS[name as ParserName]?.(data);
      if (value === undefined) return false;
      cxt.parentData[cxt.parentDataProperty] = value;
      return true;
    },
  });

  // `words: {word: value}` replaces a string by the value of its word (`caseless`: compared in lower
  // case): for the yes/no parameters whose words Consul's handlers list themselves.
  made.addKeyword({
    keyword: 'words',
    type: 'string',
    schemaType: 'object',
    modifying: true,
    errors: false,
    validate(words: Record<string, unknown>, data: string, parentSchema?: AnySchemaObject, cxt?: DataCxt) {
      if (!cxt) return false;
      const word = parentSchema?.caseless ? data.toLowerCase() : data;
      if (!Object.prototype.hasOwnProperty.call(words, word)) return false;
      cxt.parentData[cxt.parentDataProperty] = words[word];
      return true;
    },
  });
  return (queryAjv = made);
}

/** Names as they arrive: node:querystring's output (a repeated name is an array). */
export type RawQuery = Record<string, string | string[] | undefined>;

/** The typed query (or params) of a request, or a 400 with the refused field's reason. */
export type Reader<T> = (raw: RawQuery) => T;

const enum Kind {
  Flag,
  Single,
  List,
}

const readers = new WeakMap<TObject, Reader<unknown>>();

/**
 * The reader for `schema` (an object schema of query fields), compiled on first use and shared by
 * every route and app that uses the same schema object. Each call builds one small object holding
 * the declared names only; the raw query is left as it was.
 */
export function compileQuery<S extends TObject>(schema: S): Reader<Static<S>> {
  const known = readers.get(schema);
  if (known) return known as Reader<Static<S>>;
  const kinds = new Map<string, Kind>();
  // Every flag is false until its name is seen: the typed object starts as a copy of this one.
  const flagsOff: Record<string, boolean> = {};
  for (const name of Object.keys(schema.properties)) {
    const field = schema.properties[name] as { type?: unknown; [PRESENCE]?: boolean };
    const kind = field[PRESENCE] ? Kind.Flag : field.type === 'array' ? Kind.List : Kind.Single;
    kinds.set(name, kind);
    if (kind === Kind.Flag) flagsOff[name] = false;
  }
  // Compiled by the first query that needs checking (issue #30: an idle agent holds no validator of a route nobody called).
  let compiled: ValidateFunction | undefined;
  // Flags cannot fail; with no other name given and none required there is nothing for ajv to
  // check (the common request: `?stale` or no query at all), so it is not run.
  const required = (schema.required ?? []).some((name: string) => kinds.get(name) !== Kind.Flag);
  const reader: Reader<Static<S>> = (raw) => {
    const typed: Record<string, unknown> = { ...flagsOff };
    let given = 0;
    // The names sent (usually a few) rather than the names declared (a dozen or more).
    for (const name in raw) {
      const kind = kinds.get(name);
      if (kind === undefined) continue; // not declared: ignored, as Consul ignores it
      if (kind === Kind.Flag) {
        typed[name] = true;
        continue;
      }
      const v = raw[name];
      if (v === undefined) continue;
      typed[name] = kind === Kind.Single && Array.isArray(v) ? v[0] : v;
      given++;
    }
    if (given > 0 || required) {
      const validate = (compiled ??= ajv().compile(schema));
      if (!validate(typed)) throw badRequest(reasonOf(schema, validate, typed));
    }
    return typed as Static<S>;
  };
  readers.set(schema, reader);
  return reader;
}

/** Path parameters: already one string each; validated (and parsed) in place. */
export function compileParams<S extends TObject>(schema: S): (params: Record<string, string>) => Static<S> {
  let compiled: ValidateFunction | undefined;
  return (params) => {
    const validate = (compiled ??= ajv().compile(schema));
    if (!validate(params)) throw badRequest(reasonOf(schema, validate, params));
    return params as Static<S>;
  };
}

/** The reason of the field the first error is about, else a plain one naming it. */
function reasonOf(schema: TObject, validate: ValidateFunction, data: Record<string, unknown>): string {
  const e = validate.errors?.[0] as ErrorObject | undefined;
  const name = fieldOf(e);
  if (name === undefined) return 'Invalid query';
  const reason = (schema.properties[name] as { [REASON]?: Reason } | undefined)?.[REASON];
  if (typeof reason === 'string') return reason;
  if (reason) return reason(data[name]);
  return data[name] === undefined ? `Missing ${name}` : `Invalid value for ${name}`;
}

/** The top-level name an error is about: `/cas` → cas, `/by/0` → by, a missing required → its name. */
function fieldOf(e: ErrorObject | undefined): string | undefined {
  if (!e) return undefined;
  if (e.keyword === 'required' && e.instancePath === '') return (e.params as { missingProperty: string }).missingProperty;
  const path = e.instancePath.split('/')[1];
  return path === undefined ? undefined : path.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** For reasons that quote Go's error: why `text` is not a uint64 (strconv's words). */
export function uint64Problem(text: string): string {
  const parsed = parseUint64(text);
  return 'problem' in parsed ? parsed.problem : 'invalid syntax';
}
