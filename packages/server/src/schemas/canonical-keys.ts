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

/**
 * Each schema node's property names by their folded spelling, made once per node: building it on
 * every request (a Map and a regex replace per property, at every level of the body) was ~4.5 KB of
 * garbage and most of the cost of a register request's renaming (docs/benchmarks/history.md).
 */
const foldedNames = new WeakMap<Readonly<Record<string, SchemaNode>>, ReadonlyMap<string, string>>();

function byFoldedName(props: Readonly<Record<string, SchemaNode>>): ReadonlyMap<string, string> {
  let names = foldedNames.get(props);
  if (!names) {
    const made = new Map<string, string>();
    for (const name of Object.keys(props)) made.set(fold(name), name);
    foldedNames.set(props, (names = made));
  }
  return names;
}

/** Returns a copy of `value` whose object keys follow `schema`'s property names where they match. */
export function canonicalKeys(value: unknown, schema: SchemaNode | undefined): unknown {
  if (!schema || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return schema.items ? value.map((v) => canonicalKeys(v, schema.items)) : value;
  const props = schema.properties;
  if (!props) return value;
  const byFolded = byFoldedName(props);
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
