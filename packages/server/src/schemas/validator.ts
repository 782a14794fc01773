// Request bodies at the HTTP edge: each body schema is a TypeBox schema (body-fields.ts), so the
// body's type is derived from it (Static), as a route's query and params are (query-schema.ts);
// ajv checks it, each schema compiled once, by the first body it checks (an idle agent need not
// hold the validators of routes nobody called: issue #30, memory at rest). A body is canonicalised
// (key case), then validated; a failure is a 400 whose text names the field. A schema may carry a
// rule JSON Schema cannot word as Consul does (withCheck), run on the valid body: its reason is the 400.
import { Ajv, type ValidateFunction } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';
import { badRequest } from '../errors';
import { canonicalKeys, type SchemaNode } from './canonical-keys';
import { OWN_SCHEMAS_ONLY } from './query-schema';

/** Made by the first body checked: an idle agent holds no ajv instance of its own (issue #30). */
let bodyAjv: Ajv | undefined;
const ajv = (): Ajv => (bodyAjv ??= new Ajv({ allErrors: false, strict: false, removeAdditional: true, ...OWN_SCHEMAS_ONLY }));

export interface BodyValidator<T> {
  (body: unknown): T;
}

/** Key of a schema's extra check: the canonical, schema-valid body → a 400 reason, or undefined. */
const BODY_CHECK = Symbol('bodyCheck');
type BodyCheck<T> = (body: T) => string | undefined;
type Checked<S extends TSchema> = S & { [BODY_CHECK]?: BodyCheck<Static<S>> };

/** `schema` with a check of the valid body that JSON Schema cannot word as Consul does. */
export function withCheck<S extends TSchema>(schema: S, check: BodyCheck<Static<S>>): S {
  return Object.assign(schema, { [BODY_CHECK]: check });
}

const compiled = new WeakMap<TSchema, ValidateFunction>();

/** The validator of bodies of `schema`: canonical keys, ajv, the schema's check; typed from the schema. */
export function compileBody<S extends TSchema>(schema: S, what = 'Request decode failed'): BodyValidator<Static<S>> {
  const check = (schema as Checked<S>)[BODY_CHECK];
  return (body: unknown): Static<S> => {
    const canonical = canonicalKeys(body, schema as unknown as SchemaNode);
    let validate = compiled.get(schema);
    if (!validate) compiled.set(schema, (validate = ajv().compile(schema)));
    if (!validate(canonical)) {
      const e = validate.errors?.[0];
      const where = e?.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'body';
      throw badRequest(`${what}: ${where} ${e?.message ?? 'is invalid'}`);
    }
    // ajv has just checked the canonical body against this schema: it is the schema's type.
    const valid = canonical as Static<S>;
    const problem = check?.(valid);
    if (problem) throw badRequest(problem);
    return valid;
  };
}
