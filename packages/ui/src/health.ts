// Health roll-up: how many checks pass, warn and fail, and the worst of them, which gives the
// colour. Pure: takes the agent's check records, returns counts.
export type Health = 'passing' | 'warning' | 'critical';

export interface Check {
  Node: string;
  CheckID: string;
  Name: string;
  Status: string;
  Notes?: string;
  Output?: string;
  ServiceID: string;
  ServiceName: string;
  Type?: string;
}

export interface Rollup {
  passing: number;
  warning: number;
  critical: number;
}

/** Consul's statuses; anything else (maintenance included) counts as critical. */
export function healthOf(status: string): Health {
  return status === 'passing' || status === 'warning' ? status : 'critical';
}

export function rollup(checks: Check[]): Rollup {
  const r: Rollup = { passing: 0, warning: 0, critical: 0 };
  for (const c of checks) r[healthOf(c.Status)] += 1;
  return r;
}

/** The colour of a roll-up: its worst status; 'none' when there are no checks at all. */
export function worst(r: Rollup): Health | 'none' {
  if (r.critical > 0) return 'critical';
  if (r.warning > 0) return 'warning';
  if (r.passing > 0) return 'passing';
  return 'none';
}

/** Checks grouped by node: the node's own checks (no ServiceID) and all checks. */
export function checksByNode(checks: Check[]): Map<string, Check[]> {
  const out = new Map<string, Check[]>();
  for (const c of checks) {
    const list = out.get(c.Node) ?? [];
    list.push(c);
    out.set(c.Node, list);
  }
  return out;
}

/**
 * Per service, the checks that decide its health as Consul's summary counts them: each
 * instance's service checks plus the node checks of the nodes its instances run on. Built from
 * /v1/health/state/any alone (one blocking query for the whole list, not one per service), so a
 * node is known to host a service only through one of that service's own checks.
 */
export function serviceRollups(checks: Check[]): Map<string, Rollup> {
  const nodeChecks = new Map<string, Check[]>();
  const serviceChecks = new Map<string, Check[]>();
  const nodesOf = new Map<string, Set<string>>();
  for (const c of checks) {
    if (!c.ServiceID) {
      const list = nodeChecks.get(c.Node) ?? [];
      list.push(c);
      nodeChecks.set(c.Node, list);
      continue;
    }
    const list = serviceChecks.get(c.ServiceName) ?? [];
    list.push(c);
    serviceChecks.set(c.ServiceName, list);
    const nodes = nodesOf.get(c.ServiceName) ?? new Set<string>();
    nodes.add(c.Node);
    nodesOf.set(c.ServiceName, nodes);
  }
  const out = new Map<string, Rollup>();
  for (const [name, list] of serviceChecks) {
    const all = [...list];
    for (const node of nodesOf.get(name) ?? []) all.push(...(nodeChecks.get(node) ?? []));
    out.set(name, rollup(all));
  }
  return out;
}
