// One entry of the config file's `watches` list, judged as Consul 1.4 judges it when the agent
// starts or reloads (agent.reloadWatches + watch.ParseExempt + the type's factory): the same
// parameters, the same defaults and the same reasons, so a definition Consul refuses is refused
// here, by the config loader, before anything runs (docs/watches.md). Pure: no I/O, no config import.
import { parseDurationMs } from '@registry/store';

export const WATCH_TYPES = ['key', 'keyprefix', 'services', 'nodes', 'service', 'checks', 'event'] as const;
export type WatchType = (typeof WATCH_TYPES)[number];

export type WatchHandler =
  /** `args`: the argv, run without a shell (Consul's exec.Subprocess). */
  | { kind: 'args'; argv: string[] }
  /** `handler` (deprecated in Consul 1.4): one shell command, run by $SHELL -c (Consul's exec.Script). */
  | { kind: 'shell'; command: string }
  /** `handler_type = "http"` with `http_handler_config`. */
  | { kind: 'http'; path: string; method: string; header: Record<string, string[]>; timeoutMs: number; tlsSkipVerify: boolean };

export interface WatchDefinition {
  type: WatchType;
  datacenter?: string;
  token?: string;
  /** `stale`: any server answers (not for `event`). */
  stale: boolean;
  key?: string;
  prefix?: string;
  service?: string;
  tag?: string;
  passingonly: boolean;
  /** `checks`: the state asked for; `any` when neither service nor state is given. */
  state?: string;
  name?: string;
  handler: WatchHandler;
}

/** Consul's watch.DefaultTimeout for an HTTP handler. */
const DEFAULT_HTTP_TIMEOUT_MS = 10_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The parameters not yet consumed, keyed by user input: a Map. */
type Params = Map<string, unknown>;

function takeString(params: Params, name: string): string | undefined {
  if (!params.has(name)) return undefined;
  const v = params.get(name);
  if (typeof v !== 'string') throw new Error(`Expecting ${name} to be a string`);
  params.delete(name);
  return v;
}

function takeBool(params: Params, name: string): boolean {
  if (!params.has(name)) return false;
  const v = params.get(name);
  if (typeof v !== 'boolean') throw new Error(`Expecting ${name} to be a boolean`);
  params.delete(name);
  return v;
}

/** Consul's parseHttpHandlerConfig (mapstructure ignores keys it does not know). */
function httpHandlerOf(raw: unknown): Extract<WatchHandler, { kind: 'http' }> {
  const fail = (why: string): never => {
    throw new Error(`Failed to parse 'http_handler_config': ${why}`);
  };
  if (!isObject(raw)) return fail(`expected a map, got '${Array.isArray(raw) ? 'slice' : typeof raw}'`);
  const field = <T>(name: string, ok: (v: unknown) => v is T, type: string): T | undefined => {
    const v = raw[name];
    if (v === undefined || v === null) return undefined;
    return ok(v) ? v : fail(`'${name}' expected type '${type}'`);
  };
  const path = field('path', (v): v is string => typeof v === 'string', 'string') ?? '';
  if (path === '') return fail("Requires 'path' to be set");
  const method = field('method', (v): v is string => typeof v === 'string', 'string') || 'POST';
  const timeoutText = field('timeout', (v): v is string => typeof v === 'string', 'string') ?? '';
  let timeoutMs = DEFAULT_HTTP_TIMEOUT_MS;
  if (timeoutText !== '') {
    const ms = parseDurationMs(timeoutText);
    if (ms === undefined) return fail(`Failed to parse timeout: time: invalid duration ${JSON.stringify(timeoutText)}`);
    timeoutMs = ms;
  }
  const header: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  const rawHeader = field('header', isObject, 'map[string][]string');
  for (const [name, values] of Object.entries(rawHeader ?? {})) {
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) return fail(`'header[${name}]' expected type '[]string'`);
    header[name] = values as string[];
  }
  const tlsSkipVerify = field('tls_skip_verify', (v): v is boolean => typeof v === 'boolean', 'bool') ?? false;
  return { kind: 'http', path, method, header, timeoutMs, tlsSkipVerify };
}

/** The type's own parameters (Consul's watch/funcs.go factories), consumed from `params`. */
function typeParams(type: WatchType, params: Params): Partial<WatchDefinition> & { stale: boolean; passingonly: boolean } {
  // `stale` is read by every type but event ("The stale setting doesn't apply to events").
  const stale = type === 'event' ? false : takeBool(params, 'stale');
  switch (type) {
    case 'key': {
      const key = takeString(params, 'key') ?? '';
      if (key === '') throw new Error('Must specify a single key to watch');
      return { stale, key, passingonly: false };
    }
    case 'keyprefix': {
      const prefix = takeString(params, 'prefix') ?? '';
      if (prefix === '') throw new Error('Must specify a single prefix to watch');
      return { stale, prefix, passingonly: false };
    }
    case 'services':
    case 'nodes':
      return { stale, passingonly: false };
    case 'service': {
      const service = takeString(params, 'service') ?? '';
      if (service === '') throw new Error('Must specify a single service to watch');
      const tag = takeString(params, 'tag');
      const passingonly = takeBool(params, 'passingonly');
      return { stale, service, ...(tag ? { tag } : {}), passingonly };
    }
    case 'checks': {
      const service = takeString(params, 'service') ?? '';
      let state = takeString(params, 'state') ?? '';
      if (service !== '' && state !== '') throw new Error('Cannot specify service and state');
      if (service === '' && state === '') state = 'any';
      return { stale, ...(service ? { service } : { state }), passingonly: false };
    }
    case 'event': {
      const name = takeString(params, 'name');
      return { stale, ...(name ? { name } : {}), passingonly: false };
    }
  }
}

/** One watch as Consul 1.4 would run it, or an Error with Consul's reason (the caller names the watch and the file). */
export function parseWatch(raw: unknown): WatchDefinition {
  if (!isObject(raw)) throw new Error('a watch must be an object');
  const params: Params = new Map(Object.entries(raw));
  // agent.reloadWatches: the handler type, and connect watches kept out of agent config.
  const handlerType = params.has('handler_type') ? params.get('handler_type') : 'script';
  if (handlerType !== 'http' && handlerType !== 'script') throw new Error(`Handler type '${String(handlerType)}' not recognized`);
  const rawType = params.get('type');
  if (typeof rawType === 'string' && rawType.startsWith('connect_')) throw new Error(`Watch type ${rawType} is not allowed in agent config`);
  params.delete('handler_type');

  // watch.ParseExempt: the generic parameters, then the handler's, then the type's.
  const datacenter = takeString(params, 'datacenter');
  const token = takeString(params, 'token');
  const type = takeString(params, 'type') ?? '';
  if (type === '') throw new Error('Watch type must be specified');
  let http: Extract<WatchHandler, { kind: 'http' }> | undefined;
  if (handlerType === 'http') {
    if (!params.has('http_handler_config')) throw new Error("Handler type 'http' requires 'http_handler_config' to be set");
    http = httpHandlerOf(params.get('http_handler_config'));
    params.delete('http_handler_config');
  }
  if (!(WATCH_TYPES as readonly string[]).includes(type)) throw new Error(`Unsupported watch type: ${type}`);
  const own = typeParams(type as WatchType, params);
  const hasHandler = params.has('handler');
  const hasArgs = params.has('args');
  const handler = params.get('handler');
  const args = params.get('args');
  params.delete('handler');
  params.delete('args');
  if (params.size > 0) throw new Error(`Invalid parameters: [${[...params.keys()].join(' ')}]`);

  // agent.reloadWatches: exactly one handler, of the right shape.
  if (hasHandler && typeof handler !== 'string') throw new Error('Watch handler must be a string');
  if (hasArgs && (!Array.isArray(args) || !args.every((a) => typeof a === 'string'))) throw new Error('Watch args must be a list of strings');
  if ((hasHandler && hasArgs) || (hasHandler && http) || (hasArgs && http)) throw new Error('Only one watch handler allowed');
  if (!hasHandler && !hasArgs && !http) throw new Error('Must define a watch handler');
  const run: WatchHandler = http ?? (hasArgs ? { kind: 'args', argv: args as string[] } : { kind: 'shell', command: handler as string });

  return { type: type as WatchType, ...(datacenter ? { datacenter } : {}), ...(token ? { token } : {}), ...own, handler: run };
}

/** A short name for logs: the type and what it watches (`key cfg/flag`, `checks state=critical`). */
export function watchLabel(w: WatchDefinition, position: number): string {
  const target = w.key ?? w.prefix ?? (w.type === 'checks' ? (w.service ? `service=${w.service}` : `state=${w.state}`) : (w.service ?? w.name));
  return `watches[${position}] (${w.type}${target ? ` ${target}` : ''}${w.datacenter ? ` dc=${w.datacenter}` : ''})`;
}

/** Every watch of one config file's `watches` list; the first bad one throws naming the file and its position. */
export function watchesOf(file: Record<string, unknown>, source: string): WatchDefinition[] {
  const list = file.watches;
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new Error(`${source}: watches must be a list`);
  return list.map((raw, i) => {
    try {
      return parseWatch(raw);
    } catch (err) {
      throw new Error(`${source}: watches[${i}]: Failed to parse watch: ${(err as Error).message}`);
    }
  });
}
