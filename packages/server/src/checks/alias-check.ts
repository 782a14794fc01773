// Alias checks (Consul 1.3+'s agent/checks/alias.go): a check whose status is the worst among
// another node's and/or service's checks. With no AliasNode it follows this agent's own checks as
// they change (LocalState tells it); with one, it follows that node's checks in the catalog by
// blocking reads (through the agent cache), turning critical when they cannot be read.
import type { ProbeResult } from './check-output';
import type { CheckStatus } from './check-spec';

export interface AliasTarget {
  /** "" : this agent's node. */
  node: string;
  /** "" : node-level checks only. */
  serviceId: string;
  /** The alias check's own ID (never counted: a node-level alias would otherwise mirror itself). */
  selfId: string;
}

export interface AliasInput {
  CheckID: string;
  Node?: string;
  Name: string;
  ServiceID: string;
  Status: string;
  Output: string;
}

/** Consul's processChecks: critical beats warning beats passing; node checks count with the service's. */
export function aliasResult(checks: Iterable<AliasInput>, alias: AliasTarget): ProbeResult {
  let status: CheckStatus = 'passing';
  let output = 'No checks found.';
  let found = false;
  for (const c of checks) {
    if (c.CheckID === alias.selfId) continue;
    if (alias.node !== '' && c.Node !== undefined && c.Node !== alias.node) continue;
    if (c.ServiceID !== '' && c.ServiceID !== alias.serviceId) continue;
    found = true;
    if (c.Status === 'critical' || (c.Status === 'warning' && status === 'passing')) {
      status = c.Status;
      output = `Aliased check ${JSON.stringify(c.Name)} failing: ${c.Output}`;
      if (status === 'critical') break;
    }
  }
  if (found && status === 'passing') output = 'All checks passing.';
  return { status, output };
}

/** A node's checks as the catalog has them, after `minIndex` (a blocking read). */
export type NodeChecksRead = (node: string, minIndex: number, signal: AbortSignal) => Promise<{ index: number; value: AliasInput[] }>;

const BACKOFF_AFTER = 3;
const MAX_WAIT_MS = 60_000;

/** The remote form: follows AliasNode's checks until stopped; Consul's backoff after three failures. */
export function startRemoteAlias(alias: AliasTarget, read: NodeChecksRead, onResult: (r: ProbeResult) => void): { stop(): void } {
  const ac = new AbortController();
  void (async () => {
    let index = 0;
    let attempt = 0;
    while (!ac.signal.aborted) {
      if (attempt > BACKOFF_AFTER) await sleep(Math.min(MAX_WAIT_MS, 1000 * 2 ** Math.min(attempt - BACKOFF_AFTER, 16)), ac.signal);
      if (ac.signal.aborted) return;
      try {
        const r = await read(alias.node, index, ac.signal);
        attempt = 0;
        index = Math.max(1, r.index);
        onResult(aliasResult(r.value, alias));
      } catch (err) {
        if (ac.signal.aborted) return;
        attempt++;
        if (attempt > 1) onResult({ status: 'critical', output: `Failure checking aliased node or service: ${(err as Error).message}` });
        if (attempt <= BACKOFF_AFTER) await sleep(1000, ac.signal);
      }
    }
  })();
  return { stop: () => ac.abort() };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    t.unref();
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(t);
      resolve();
    }
  });
}
