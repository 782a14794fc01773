// ajv at the HTTP edge: schemas compiled once at start-up; a body is canonicalised (key case),
// then validated; a failure is a 400 whose text names the field.
import { Ajv, type ValidateFunction } from 'ajv';
import { badRequest } from '../http/errors';
import { canonicalKeys, type SchemaNode } from './canonical-keys';

const ajv = new Ajv({ allErrors: false, strict: false, removeAdditional: true });

export interface BodyValidator<T> {
  (body: unknown): T;
}

export function compileBody<T>(schema: SchemaNode, what = 'Request decode failed'): BodyValidator<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  return (body: unknown): T => {
    const canonical = canonicalKeys(body, schema);
    if (!validate(canonical)) {
      const e = validate.errors?.[0];
      const where = e?.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'body';
      throw badRequest(`${what}: ${where} ${e?.message ?? 'is invalid'}`);
    }
    return canonical as T;
  };
}
