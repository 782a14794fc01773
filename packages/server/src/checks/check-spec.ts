// A check definition turned into what the agent runs (pure): its identity, its initial status and
// its kind (TTL, HTTP, TCP, script, Docker, gRPC or alias) with durations in ms, validated with Consul's texts (Appendix A), and
// the catalog row that reports it.
import type { CheckRequest } from '@registry/store';
import { parseGoDuration } from '@registry/store';
import { badRequest } from '../errors';
import type { AgentCheckDefinition } from '../schemas/agent-check';

export const CHECK_STATUSES = ['passing', 'warning', 'critical'] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

export const isCheckStatus = (s: string): s is CheckStatus => (CHECK_STATUSES as readonly string[]).includes(s);

/** Consul's default for HTTP, TCP and gRPC checks without a Timeout. */
export const DEFAULT_CHECK_TIMEOUT_MS = 10_000;
/** Consul's default for script checks without a Timeout (CheckMonitor: 30 s). */
export const DEFAULT_SCRIPT_TIMEOUT_MS = 30_000;
/** The shell Consul records for a Docker check without one (unused with Args, as in Consul 1.4). */
export const DEFAULT_DOCKER_SHELL = '/bin/sh';

export type CheckKind =
  | { type: 'ttl'; ttlMs: number }
  | { type: 'http'; url: string; method: string; header: Record<string, string[]>; tlsSkipVerify: boolean; intervalMs: number; timeoutMs: number }
  | { type: 'tcp'; address: string; intervalMs: number; timeoutMs: number }
  /** A command run without a shell (checks/script-probe.ts). */
  | { type: 'script'; args: string[]; intervalMs: number; timeoutMs: number }
  /** A command run inside a container through the `docker` CLI (checks/script-probe.ts). */
  | { type: 'docker'; containerId: string; shell: string; args: string[]; intervalMs: number; timeoutMs: number }
  /** `grpc.health.v1.Health/Check` on `host:port`, for `service` ("" = the whole server) (checks/grpc-probe.ts). */
  | { type: 'grpc'; target: string; server: string; service: string; useTls: boolean; tlsSkipVerify: boolean; intervalMs: number; timeoutMs: number }
  /** The worst status among another node's and/or service's checks ("" node: this agent's own checks) (checks/alias-check.ts). */
  | { type: 'alias'; node: string; serviceId: string };

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

// Consul 1.4 has no `Script` (a shell line; removed in 1.1).
const UNSUPPORTED: [keyof AgentCheckDefinition, string][] = [['Script', 'Script']];

/** Consul's CheckType.IsAlias. */
const isAlias = (def: AgentCheckDefinition): boolean => Boolean(def.AliasNode || def.AliasService);

function unsupportedKind(def: AgentCheckDefinition): string | undefined {
  for (const [field, kind] of UNSUPPORTED) if (def[field]) return kind;
  return undefined;
}

/** The command of a script or Docker check: `ScriptArgs`, or `Args` (the config files' name, also taken by the API). */
export function scriptArgsOf(def: AgentCheckDefinition): string[] {
  if (def.ScriptArgs && def.ScriptArgs.length > 0) return def.ScriptArgs;
  return def.Args ?? [];
}

/** A check that runs a command here or in a container (Consul's IsScript: gated by enable_script_checks). */
export const isScriptCheck = (def: AgentCheckDefinition): boolean => scriptArgsOf(def).length > 0;

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
  const args = scriptArgsOf(def);
  const intervalKind = Boolean(def.HTTP || def.TCP || def.GRPC || args.length > 0 || unsupported);
  const problems: string[] = [];
  if (intervalMs > 0 && ttlMs > 0) problems.push('Interval and TTL cannot both be specified');
  if (intervalKind && intervalMs <= 0) problems.push('Interval must be > 0 for Script, HTTP, or TCP checks');
  if (!intervalKind && !isAlias(def) && ttlMs <= 0) problems.push('TTL must be > 0 for TTL checks');
  // Consul 1.4's CheckType.Validate: an alias check is neither a TTL nor an interval check.
  if (isAlias(def) && ttlMs > 0) problems.push('TTL must be not be set for Alias checks');
  if (isAlias(def) && intervalKind) problems.push('Interval cannot be set for Alias checks');
  if (def.HTTP && def.TCP) problems.push('HTTP and TCP cannot both be specified');
  if (problems.length > 0) throw badRequest(`Invalid check: ${problems.join('; ')}`);
  if (unsupported) throw badRequest(`Invalid check: ${unsupported} checks are not supported by this agent (TTL, HTTP, TCP, script, Docker, gRPC and alias are)`);
  // The URL and address are not judged here: Consul 1.4 accepts any string and the check, once
  // run, is critical with the reason as its output (checks/probes.ts) — so does this agent.

  const timeout = timeoutMs > 0 ? timeoutMs : DEFAULT_CHECK_TIMEOUT_MS;
  return {
    CheckID: ids.CheckID,
    Name: ids.Name,
    Notes: def.Notes ?? '',
    ServiceID: ids.ServiceID,
    Status: (def.Status || 'critical') as CheckStatus,
    kind: kindOf(def, args, ttlMs, intervalMs, timeoutMs, timeout),
    ...(deregisterAfterMs > 0 ? { deregisterAfterMs } : {}),
    definition: def,
  };
}

/** Consul's order when several kinds are given (agent.addCheck: TTL, HTTP, TCP, gRPC, Docker, script, alias). */
function kindOf(def: AgentCheckDefinition, args: string[], ttlMs: number, intervalMs: number, timeoutMs: number, timeout: number): CheckKind {
  if (ttlMs > 0) return { type: 'ttl', ttlMs };
  if (isAlias(def)) return { type: 'alias', node: def.AliasNode ?? '', serviceId: def.AliasService ?? '' };
  if (def.HTTP) return { type: 'http', url: def.HTTP, method: (def.Method || 'GET').toUpperCase(), header: { ...(def.Header ?? {}) }, tlsSkipVerify: def.TLSSkipVerify ?? false, intervalMs, timeoutMs: timeout };
  if (def.TCP) return { type: 'tcp', address: def.TCP, intervalMs, timeoutMs: timeout };
  if (def.GRPC) {
    // Consul splits at the first "/": the server to dial, then the service asked about. The
    // address itself is judged when the check runs (a malformed one is a critical result).
    const slash = def.GRPC.indexOf('/');
    const server = slash < 0 ? def.GRPC : def.GRPC.slice(0, slash);
    const service = slash < 0 ? '' : def.GRPC.slice(slash + 1);
    return { type: 'grpc', target: def.GRPC, server, service, useTls: def.GRPCUseTLS ?? false, tlsSkipVerify: def.TLSSkipVerify ?? false, intervalMs, timeoutMs: timeout };
  }
  const scriptTimeout = timeoutMs > 0 ? timeoutMs : DEFAULT_SCRIPT_TIMEOUT_MS;
  if (def.DockerContainerID) return { type: 'docker', containerId: def.DockerContainerID, shell: def.Shell || DEFAULT_DOCKER_SHELL, args: [...args], intervalMs, timeoutMs: scriptTimeout };
  return { type: 'script', args: [...args], intervalMs, timeoutMs: scriptTimeout };
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
