// Service definitions as an agent's configuration files hold them (Consul's `service { … }` /
// `services [ … ]`, HCL or JSON, snake_case keys), turned into /v1/agent/service/register bodies.
import { readFileSync } from 'node:fs';
import { CliError } from './cli-error';

type Json = Record<string, unknown>;

/** Keys whose value is a map of the user's own keys: kept as written. */
const USER_MAPS = new Set(['meta', 'tagged_addresses', 'header', 'config']);
/** Blocks that are lists even with one element. */
const LISTS = new Set(['checks', 'services', 'upstreams', 'tags', 'args', 'service']);
const WORDS: Record<string, string> = { id: 'ID', ttl: 'TTL', http: 'HTTP', tcp: 'TCP', grpc: 'GRPC', tls: 'TLS', ns: 'NS', dc: 'DC', tls_skip_verify: 'TLSSkipVerify', grpc_use_tls: 'GRPCUseTLS' };

function pascal(key: string): string {
  if (WORDS[key]) return WORDS[key];
  if (/[A-Z]/.test(key)) return key;
  return key
    .split('_')
    .map((w) => WORDS[w] ?? w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

function canonical(value: unknown, key = ''): unknown {
  // HCL decodes a block as a list of objects; a single block is the object itself.
  if (Array.isArray(value) && !LISTS.has(key) && value.length === 1 && typeof value[0] === 'object' && value[0] !== null) value = value[0];
  if (Array.isArray(value)) return value.map((v) => canonical(v));
  if (typeof value !== 'object' || value === null) return value;
  if (USER_MAPS.has(key.toLowerCase())) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) out[pascal(k)] = canonical(v, k.toLowerCase());
  return out;
}

export async function readServiceFile(file: string): Promise<Json[]> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`Error reading file ${file}: ${(e as Error).message}`);
  }
  let raw: Json;
  if (/\.json$/i.test(file)) {
    try {
      raw = JSON.parse(text) as Json;
    } catch (e) {
      throw new CliError(`Error decoding ${file}: ${(e as Error).message}`);
    }
  } else {
    // A CommonJS module: its exports arrive as the namespace's default.
    const hcl = (await import('js-hcl-parser')) as typeof import('js-hcl-parser') & { default?: typeof import('js-hcl-parser') };
    const parse = hcl.default?.parse ?? hcl.parse;
    const decoded = parse(text);
    if (decoded.startsWith('unable')) throw new CliError(`Error decoding ${file}: ${decoded.replace(/^unable to [^:]*: /, '')}`);
    raw = JSON.parse(decoded) as Json;
  }
  const defs: unknown[] = [];
  for (const [k, v] of Object.entries(raw)) {
    const key = k.toLowerCase();
    if (key === 'service') defs.push(...(Array.isArray(v) ? v : [v]));
    else if (key === 'services') defs.push(...(v as unknown[]));
  }
  if (defs.length === 0) throw new CliError(`Error decoding ${file}: no service definition (expected "service" or "services")`);
  return defs.map((d) => canonical(d, 'one') as Json);
}
