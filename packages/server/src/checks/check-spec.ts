// A check definition turned into what the agent runs (pure): its identity, its initial status and
// its kind (TTL, HTTP or TCP) with durations in ms, validated with Consul's texts (Appendix A), and
// the catalog row that reports it.
import type { CheckRequest } from '@registry/store';
import { parseGoDuration } from '@registry/store';
import { badRequest } from '../errors';
import type { AgentCheckDefinition } from '../schemas/agent-check';

export const CHECK_STATUSES = ['passing', 'warning', 'critical'] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

export const isCheckStatus = (s: string): s is CheckStatus => (CHECK_STATUSES as readonly string[]).includes(s);

/** Consul's default for HTTP and TCP checks without a Timeout. */
export const DEFAULT_CHECK_TIMEOUT_MS = 10_000;

export type CheckKind =
  | { type: 'ttl'; ttlMs: number }
  | { type: 'http'; url: string; method: string; header: Record<string, string[]>; tlsSkipVerify: boolean; intervalMs: number; timeoutMs: number }
  | { type: 'tcp'; address: string; intervalMs: number; timeoutMs: number };

export interface CheckSpec {
  CheckID: string;
  Name: string;
  Notes: string;
  /** "" for a node-level check. */
  ServiceID: string;
  /** The status a check starts with (critical unless the definition says otherwise). */
  Status: CheckStatus;
  kind: CheckKind;
  /** Remove the check's service after it has been critical this long. */
  deregisterAfterMs?: number;
  /** The definition as given (persisted, and re-read on restart). */
  definition: AgentCheckDefinition;
}

/** Go's time.Duration is an int64 of nanoseconds: about 292 years, and no more. */
const MAX_DURATION_NS = 2 ** 63 - 1;

/** Milliseconds of a duration field (a Go string or nanoseconds), 0 when absent. */
function durationMs(value: string | number | null | undefined, field: string): number {
  if (value === undefined || value === null || value === '') return 0;
  const ns = typeof value === 'number' ? value : parseGoDuration(value);
  // Beyond an int64 Go's decoder refuses the duration, so Consul answers 400 at registration.
  if (ns === undefined || !Number.isFinite(ns) || Math.abs(ns) > MAX_DURATION_NS) {
    throw badRequest(`Request decode failed: ${field}: time: invalid duration ${JSON.stringify(value)}`);
  }
  return ns / 1e6;
}

const UNSUPPORTED: [keyof AgentCheckDefinition, string][] = [
  ['ScriptArgs', 'Script'],
  ['Args', 'Script'],
  ['Script', 'Script'],
  ['DockerContainerID', 'Docker'],
  ['GRPC', 'gRPC'],
  ['AliasNode', 'Alias'],
  ['AliasService', 'Alias'],
];

function unsupportedKind(def: AgentCheckDefinition): string | undefined {
  for (const [field, kind] of UNSUPPORTED) {
    const v = def[field];
    if (Array.isArray(v) ? v.length > 0 : Boolean(v)) return kind;
  }
  return undefined;
}

/**
 * The check a definition describes. `id` and `name` are the caller's choices (check/register: ID
 * defaults to Name; service checks: `service:<id>[:n]`); the status has been validated by the caller,
 * whose message differs per endpoint. Throws 400 `Invalid check: …` for an unusable type.
 */
export function checkSpecOf(def: AgentCheckDefinition, ids: { CheckID: string; Name: string; ServiceID: string }): CheckSpec {
  const ttlMs = durationMs(def.TTL, 'TTL');
  const intervalMs = durationMs(def.Interval, 'Interval');
  const timeoutMs = durationMs(def.Timeout, 'Timeout');
  const deregisterAfterMs = durationMs(def.DeregisterCriticalServiceAfter, 'DeregisterCriticalServiceAfter');
  const unsupported = unsupportedKind(def);
  const intervalKind = Boolean(def.HTTP || def.TCP || unsupported);
  const problems: string[] = [];
  if (intervalMs > 0 && ttlMs > 0) problems.push('Interval and TTL cannot both be specified');
  if (intervalKind && intervalMs <= 0) problems.push('Interval must be > 0 for Script, HTTP, or TCP checks');
  if (!intervalKind && ttlMs <= 0) problems.push('TTL must be > 0 for TTL checks');
  if (def.HTTP && def.TCP) problems.push('HTTP and TCP cannot both be specified');
  if (problems.length > 0) throw badRequest(`Invalid check: ${problems.join('; ')}`);
  if (unsupported) throw badRequest(`Invalid check: ${unsupported} checks are not supported by this agent (TTL, HTTP and TCP are)`);
  // The URL and address are not judged here: Consul 1.4 accepts any string and the check, once
  // run, is critical with the reason as its output (checks/probes.ts) — so does this agent.

  const timeout = timeoutMs > 0 ? timeoutMs : DEFAULT_CHECK_TIMEOUT_MS;
  const kind: CheckKind = def.HTTP
    ? { type: 'http', url: def.HTTP, method: (def.Method || 'GET').toUpperCase(), header: { ...(def.Header ?? {}) }, tlsSkipVerify: def.TLSSkipVerify ?? false, intervalMs, timeoutMs: timeout }
    : def.TCP
      ? { type: 'tcp', address: def.TCP, intervalMs, timeoutMs: timeout }
      : { type: 'ttl', ttlMs };
  return {
    CheckID: ids.CheckID,
    Name: ids.Name,
    Notes: def.Notes ?? '',
    ServiceID: ids.ServiceID,
    Status: (def.Status || 'critical') as CheckStatus,
    kind,
    ...(deregisterAfterMs > 0 ? { deregisterAfterMs } : {}),
    definition: def,
  };
}

/** A check registered on its own (check/register, config `checks`): Consul's order and texts. */
export function standaloneCheckSpec(def: AgentCheckDefinition): CheckSpec {
  if (!def.Name) throw badRequest('Missing check name');
  if (def.Status && !isCheckStatus(def.Status)) throw badRequest('Bad check status');
  return checkSpecOf(def, { CheckID: def.CheckID || def.ID || def.Name, Name: def.Name, ServiceID: def.ServiceID ?? '' });
}

/** The check as a catalog row of `node` with its current status and output. */
export function catalogCheckOf(spec: CheckSpec, node: string, status: string, output: string): CheckRequest {
  const d = spec.definition;
  const definition: NonNullable<CheckRequest['Definition']> = {};
  if (spec.kind.type === 'http') {
    definition.HTTP = spec.kind.url;
    if (d.Method) definition.Method = spec.kind.method;
    if (Object.keys(spec.kind.header).length > 0) definition.Header = spec.kind.header;
    if (spec.kind.tlsSkipVerify) definition.TLSSkipVerify = true;
  }
  if (spec.kind.type === 'tcp') definition.TCP = spec.kind.address;
  for (const key of ['Interval', 'Timeout', 'DeregisterCriticalServiceAfter'] as const) {
    const v = d[key];
    if (v !== undefined && v !== null && v !== '') definition[key] = v;
  }
  return {
    Node: node,
    CheckID: spec.CheckID,
    Name: spec.Name,
    Status: status,
    Notes: spec.Notes,
    Output: output,
    ServiceID: spec.ServiceID,
    Definition: definition,
  };
}
