// Consul decodes request bodies case-insensitively (Go's mapstructure), so `{"node": "a"}` and
// `{"Node": "a"}` mean the same, and a few fields accept snake_case aliases (`service_id`).
// Before ajv sees a body we rename its keys to the schema's spelling, walking only declared
// `properties`: free-form maps (Meta, NodeMeta, TaggedAddresses, Config) keep their keys.

export interface SchemaNode {
  type?: string | readonly string[];
  properties?: Readonly<Record<string, SchemaNode>>;
  items?: SchemaNode;
  additionalProperties?: boolean | SchemaNode;
  readonly [k: string]: unknown;
}

const fold = (k: string) => k.replace(/_/g, '').toLowerCase();

/** Returns a copy of `value` whose object keys follow `schema`'s property names where they match. */
export function canonicalKeys(value: unknown, schema: SchemaNode | undefined): unknown {
  if (!schema || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return schema.items ? value.map((v) => canonicalKeys(v, schema.items)) : value;
  const props = schema.properties;
  if (!props) return value;
  const byFolded = new Map<string, string>();
  for (const name of Object.keys(props)) byFolded.set(fold(name), name);
  const out: Record<string, unknown> = Object.create(null); // a body's keys: `__proto__` is a key like any other
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const name = Object.hasOwn(props, key) ? key : byFolded.get(fold(key));
    if (name === undefined) {
      out[key] = v; // unknown keys are kept for ajv to strip or refuse per schema
      continue;
    }
    // An exact spelling wins over a folded alias if both are sent.
    if (name !== key && Object.prototype.hasOwnProperty.call(value, name)) continue;
    out[name] = canonicalKeys(v, props[name]);
  }
  return out;
}
