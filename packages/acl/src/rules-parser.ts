/**
 * Rule text (HCL v1 or JSON) → ParsedRules, with Consul 1.4's validation.
 *
 * js-hcl-parser decodes into plain JSON where every block becomes an array of
 * objects keyed by its label (`service "web" {…}` → `{"service":[{"web":[{…}]}]}`)
 * and JSON rule text comes out in the same shape, so one walker serves both forms.
 */
import { Access, isAccess, isKeyAccess } from './access';
import { emptyRules, ParsedRules, PlainResource, RulesBuilder, ScalarResource, ServiceResource } from './parsed-rules';

type HclParser = typeof import('js-hcl-parser');
let hcl: HclParser | undefined;

/**
 * The parser is loaded on the first rule text: a GopherJS build whose code and Go runtime take ~5 MiB
 * of heap, which a server that never parses rules (ACLs off) need not hold (issue #30, memory at rest).
 */
function parseHcl(text: string): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  hcl ??= require('js-hcl-parser') as HclParser;
  return hcl.parse(text);
}

/** Rule text that cannot be used: a syntax error or a value the rule language does not allow. */
export class RuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RuleError';
  }
}

type Target =
  | { readonly kind: 'scalar'; readonly field: ScalarResource }
  | { readonly kind: 'plain'; readonly field: PlainResource; readonly allowsList: boolean }
  | { readonly kind: 'service'; readonly field: ServiceResource };

/** Top-level words of the rule language. Anything else is ignored, as Consul's decoder does. */
const RESOURCES: ReadonlyMap<string, Target> = new Map<string, Target>([
  ['acl', { kind: 'scalar', field: 'acl' }],
  ['keyring', { kind: 'scalar', field: 'keyring' }],
  ['operator', { kind: 'scalar', field: 'operator' }],
  ['agent', { kind: 'plain', field: 'agent', allowsList: false }],
  ['agent_prefix', { kind: 'plain', field: 'agentPrefix', allowsList: false }],
  ['event', { kind: 'plain', field: 'event', allowsList: false }],
  ['event_prefix', { kind: 'plain', field: 'eventPrefix', allowsList: false }],
  ['key', { kind: 'plain', field: 'key', allowsList: true }],
  ['key_prefix', { kind: 'plain', field: 'keyPrefix', allowsList: true }],
  ['node', { kind: 'plain', field: 'node', allowsList: false }],
  ['node_prefix', { kind: 'plain', field: 'nodePrefix', allowsList: false }],
  ['query', { kind: 'plain', field: 'query', allowsList: false }],
  ['query_prefix', { kind: 'plain', field: 'queryPrefix', allowsList: false }],
  ['service', { kind: 'service', field: 'service' }],
  ['service_prefix', { kind: 'service', field: 'servicePrefix' }],
  ['session', { kind: 'plain', field: 'session', allowsList: false }],
  ['session_prefix', { kind: 'plain', field: 'sessionPrefix', allowsList: false }],
]);

/**
 * Pre-1.4 ("legacy") rule text, as legacy tokens carry it (Consul's parseLegacy): every block is a
 * prefix rule, there are no `_prefix` forms and no `acl` rule (such words are ignored, as any unknown
 * word is).
 */
const LEGACY_RESOURCES: ReadonlyMap<string, Target> = new Map<string, Target>([
  ['keyring', { kind: 'scalar', field: 'keyring' }],
  ['operator', { kind: 'scalar', field: 'operator' }],
  ['agent', { kind: 'plain', field: 'agentPrefix', allowsList: false }],
  ['event', { kind: 'plain', field: 'eventPrefix', allowsList: false }],
  ['key', { kind: 'plain', field: 'keyPrefix', allowsList: true }],
  ['node', { kind: 'plain', field: 'nodePrefix', allowsList: false }],
  ['query', { kind: 'plain', field: 'queryPrefix', allowsList: false }],
  ['service', { kind: 'service', field: 'servicePrefix' }],
  ['session', { kind: 'plain', field: 'sessionPrefix', allowsList: false }],
]);

/** Which rule language a text is in: 1.4's, or the legacy one of tokens with embedded rules. */
export type RuleSyntax = 'current' | 'legacy';

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  return value === undefined ? 'missing' : JSON.stringify(value);
}

/**
 * HCL's decoder matches names case-insensitively (`Service "web" { Policy = "read" }`
 * works in Consul), so attribute names are looked up the same way.
 */
function attribute(body: JsonObject, name: string): unknown {
  let found: unknown;
  for (const key of Object.keys(body)) if (key.toLowerCase() === name) found = body[key];
  return found;
}

/** A block's decoded value is an array of objects (HCL) or, from hand-made JSON, one object. */
function objects(value: unknown): JsonObject[] | undefined {
  if (isObject(value)) return [value];
  if (Array.isArray(value) && value.every(isObject)) return value;
  return undefined;
}

function decode(text: string): JsonObject {
  const output = parseHcl(text);
  if (output.startsWith('unable')) {
    // "unable to parse JSON: At 2:2: …" → keep the parser's position and reason.
    const reason = output.replace(/^unable to [^:]*: /, '');
    throw new RuleError(`Failed to parse ACL rules: ${reason}`);
  }
  const value: unknown = JSON.parse(output);
  if (!isObject(value)) throw new RuleError('Failed to parse ACL rules: expected an object of resources at the top level');
  return value;
}

/**
 * The HCL parser costs milliseconds per policy (about 6 ms for 20 rules), and the
 * same texts are parsed again and again (validated on write, compiled for every
 * token that links them), so results are remembered by their text. They are
 * frozen, so sharing them is safe.
 */
const MAX_REMEMBERED = 4096;
const remembered = new Map<string, ParsedRules>();

/**
 * Parses one policy's rules. Empty (or blank) text is an empty policy.
 * Throws RuleError naming the resource, the segment and the bad value.
 */
export function parseRules(text: string): ParsedRules {
  return parseRulesIn(text, 'current');
}

/** A legacy token's rules (Consul's parseLegacy): blocks are prefix rules; `_prefix` forms and `acl` are ignored. */
export function parseLegacyRules(text: string): ParsedRules {
  return parseRulesIn(text, 'legacy');
}

function parseRulesIn(text: string, syntax: RuleSyntax): ParsedRules {
  // Legacy texts are remembered under a key no current text can have (a NUL cannot start rule text that parses).
  const memo = syntax === 'legacy' ? `\0legacy\0${text}` : text;
  const known = remembered.get(memo);
  if (known !== undefined) return known;
  const parsed = deepFreeze(parseUncached(text, syntax === 'legacy' ? LEGACY_RESOURCES : RESOURCES));
  if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
  remembered.set(memo, parsed);
  return parsed;
}

function deepFreeze(rules: ParsedRules): ParsedRules {
  for (const value of Object.values(rules)) {
    if (typeof value !== 'object') continue;
    for (const rule of Object.values(value as object)) Object.freeze(rule);
    Object.freeze(value);
  }
  return Object.freeze(rules);
}

function parseUncached(text: string, resources: ReadonlyMap<string, Target>): ParsedRules {
  if (text.trim() === '') return emptyRules();
  const decoded = decode(text);
  const builder = new RulesBuilder();
  for (const word of Object.keys(decoded)) {
    const target = resources.get(word.toLowerCase());
    if (target === undefined) continue;
    const resource = word.toLowerCase();
    if (target.kind === 'scalar') addScalar(builder, target.field, resource, decoded[word]);
    else addBlocks(builder, target, resource, decoded[word]);
  }
  return builder.build();
}

function addScalar(builder: RulesBuilder, field: ScalarResource, resource: string, value: unknown): void {
  // An empty string is allowed and means the rule says nothing.
  if (value === '') return;
  if (!isAccess(value)) {
    throw new RuleError(`Invalid ${resource} policy: ${show(value)} (expected "read", "write" or "deny")`);
  }
  builder.setScalar(field, value);
}

function addBlocks(builder: RulesBuilder, target: Exclude<Target, { kind: 'scalar' }>, resource: string, value: unknown): void {
  const labelled = objects(value);
  if (labelled === undefined) {
    throw new RuleError(`Invalid ${resource} rules: expected blocks such as ${resource} "<name>" { policy = "read" }`);
  }
  for (const item of labelled) {
    for (const segment of Object.keys(item)) {
      const bodies = objects(item[segment]);
      if (bodies === undefined || bodies.length === 0) {
        throw new RuleError(`Invalid ${resource} policy "${segment}": expected a block with a policy, got ${show(item[segment])}`);
      }
      for (const body of bodies) {
        if (target.kind === 'service') addService(builder, target.field, resource, segment, body);
        else addPlain(builder, target, resource, segment, body);
      }
    }
  }
}

function addPlain(
  builder: RulesBuilder,
  target: { readonly field: PlainResource; readonly allowsList: boolean },
  resource: string,
  segment: string,
  body: JsonObject,
): void {
  const policy = attribute(body, 'policy');
  if (policy === 'list' && !target.allowsList) {
    throw new RuleError(`Invalid ${resource} policy "${segment}": "list" (list is only valid for key and key_prefix)`);
  }
  if (!isKeyAccess(policy)) {
    const expected = target.allowsList ? '"read", "write", "list" or "deny"' : '"read", "write" or "deny"';
    throw new RuleError(`Invalid ${resource} policy "${segment}": ${show(policy)} (expected ${expected})`);
  }
  builder.addPlain(target.field, segment, policy);
}

function addService(builder: RulesBuilder, field: ServiceResource, resource: string, segment: string, body: JsonObject): void {
  const policy = attribute(body, 'policy');
  if (!isAccess(policy)) {
    throw new RuleError(`Invalid ${resource} policy "${segment}": ${show(policy)} (expected "read", "write" or "deny")`);
  }
  const intentions = attribute(body, 'intentions');
  if (intentions === undefined || intentions === '') {
    builder.addService(field, segment, { policy });
    return;
  }
  if (!isAccess(intentions)) {
    throw new RuleError(`Invalid ${resource} intentions "${segment}": ${show(intentions)} (expected "read", "write" or "deny")`);
  }
  builder.addService(field, segment, { policy, intentions: intentions as Access });
}
