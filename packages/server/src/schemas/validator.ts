// ajv at the HTTP edge: each schema compiled once, by the first body it checks (an idle agent need
// not hold the validators of routes nobody called: issue #30, memory at rest); a body is canonicalised (key case),
// then validated; a failure is a 400 whose text names the field. A schema may carry a rule JSON
// Schema cannot word as Consul does (BODY_CHECK), run on the valid body: its reason is the 400.
import { Ajv, type ValidateFunction } from 'ajv';
import { badRequest } from '../errors';
import { canonicalKeys, type SchemaNode } from './canonical-keys';

const ajv = new Ajv({ allErrors: false, strict: false, removeAdditional: true });

export interface BodyValidator<T> {
  (body: unknown): T;
}

/** Key of a schema's extra check: the canonical, schema-valid body → a 400 reason, or undefined. */
export const BODY_CHECK = Symbol('bodyCheck');
export type BodyCheck = (body: any) => string | undefined;
export type CheckedSchema = SchemaNode & { [BODY_CHECK]?: BodyCheck };

export function compileBody<T>(schema: CheckedSchema, what = 'Request decode failed'): BodyValidator<T> {
  let compiled: ValidateFunction | undefined;
  const check = schema[BODY_CHECK];
  return (body: unknown): T => {
    const canonical = canonicalKeys(body, schema);
    const validate = (compiled ??= ajv.compile(schema));
    if (!validate(canonical)) {
      const e = validate.errors?.[0];
      const where = e?.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'body';
      throw badRequest(`${what}: ${where} ${e?.message ?? 'is invalid'}`);
    }
    const problem = check?.(canonical);
    if (problem) throw badRequest(problem);
    return canonical as T;
  };
}
