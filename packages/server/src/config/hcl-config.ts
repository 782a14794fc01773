// HCL config files. js-hcl-parser (hashicorp/hcl v1) decodes every block as a list of objects
// (`acl { enabled = true }` → `"acl": [{"enabled": true}]`), where JSON has one object. Consul
// flattens those lists for keys that are objects in its config struct; we do the same, walking
// the config schema (and the service/check schemas inside definitions). Repeated `service` and
// `check` blocks are several definitions, as in Consul.
import type { SchemaNode } from '../schemas/canonical-keys';
import { agentServiceSchema } from '../schemas/agent-service';
import { checkDefinitionSchema } from '../schemas/agent-check';
import { configFileSchema } from './config-schema';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const fold = (k: string) => k.replace(/_/g, '').toLowerCase();

function typesOf(schema: SchemaNode | undefined): readonly string[] {
  if (!schema?.type) return [];
  return typeof schema.type === 'string' ? [schema.type] : schema.type;
}

/** A schema node that is an object and never a list: its HCL blocks are merged into one object. */
function isObjectOnly(schema: SchemaNode | undefined): boolean {
  const types = typesOf(schema);
  return types.includes('object') && !types.includes('array');
}

function childSchema(schema: SchemaNode | undefined, key: string): SchemaNode | undefined {
  const props = schema?.properties;
  if (props) {
    if (props[key]) return props[key];
    const name = Object.keys(props).find((p) => fold(p) === fold(key));
    if (name) return props[name];
  }
  return typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

function flatten(value: unknown, schema: SchemaNode | undefined): unknown {
  if (Array.isArray(value)) {
    if (isObjectOnly(schema) && value.length > 0 && value.every(isObject)) return flatten(Object.assign({}, ...value), schema);
    return value.map((v) => flatten(v, schema?.items));
  }
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) out[k] = flatten(v, childSchema(schema, k));
  return out;
}

const checkSchema: SchemaNode = { ...checkDefinitionSchema, type: 'object' };

/** The config schema with the service and check definitions' own shapes, for flattening only. */
const walkSchema: SchemaNode = {
  ...configFileSchema,
  properties: {
    ...configFileSchema.properties,
    service: agentServiceSchema,
    services: { type: 'array', items: agentServiceSchema },
    check: checkSchema,
    checks: { type: 'array', items: checkSchema },
  },
};

type HclParser = typeof import('js-hcl-parser');
let hcl: HclParser | undefined;

/** Loaded on the first .hcl file: ~5 MiB of heap an agent configured in JSON need not hold (issue #30). */
function parseHcl(text: string): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  hcl ??= require('js-hcl-parser') as HclParser;
  return hcl.parse(text);
}

/** HCL text → the same JSON a `.json` config file would hold. Throws with the parser's reason. */
export function parseHclConfig(text: string): Json {
  const output = parseHcl(text);
  if (output.startsWith('unable')) throw new Error(output.replace(/^unable to [^:]*: /, ''));
  const raw: unknown = JSON.parse(output);
  if (!isObject(raw)) throw new Error('the top level must be an object');
  const top: Json = { ...raw };
  for (const [one, many] of [['service', 'services'], ['check', 'checks']] as const) {
    const blocks = top[one];
    if (!Array.isArray(blocks)) continue;
    delete top[one];
    top[many] = [...(Array.isArray(top[many]) ? (top[many] as unknown[]) : []), ...blocks];
  }
  return flatten(top, walkSchema) as Json;
}
