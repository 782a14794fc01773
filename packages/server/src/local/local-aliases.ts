// Alias checks with no AliasNode follow this agent's own checks (checks/alias-check.ts judges
// them): when a local check of a service comes, goes or changes, that service's aliases are judged
// again, once per event-loop turn — as Consul notifies an alias only of its service's checks.
// Alias checks are not counted by other aliases (Consul counts a node-level one, so two node-level
// aliases would feed each other's output without end).
import { aliasResult, type AliasInput } from '../checks/alias-check';
import type { ProbeResult } from '../checks/check-output';
import type { Runner } from '../checks/check-runner';

export interface AliasHost<T> {
  /** The local checks an alias may follow: the agent's non-alias checks and its maintenance checks. */
  inputs(): AliasInput[];
  /** What an alias follows and its current result. */
  target(t: T): { serviceId: string; selfId: string; status: string; output: string };
  /** An alias's result changed. */
  judged(t: T, r: ProbeResult): void;
}

export class LocalAliases<T> {
  private readonly members = new Map<string, T>();
  private pass: NodeJS.Immediate | undefined;
  /** The service IDs ("" : node-level) whose checks changed since the last pass; null: judge every alias. */
  private dirty: Set<string> | null = new Set();
  private stopped = false;

  constructor(private readonly host: AliasHost<T>) {}

  /** Follow alias `t` (check `id`) until the returned runner is stopped; it is judged at the next pass. */
  add(id: string, t: T): Runner {
    this.members.set(id, t);
    this.changed(null);
    return { stop: () => void (this.members.get(id) === t && this.members.delete(id)) };
  }

  /** A local check of `serviceId` ("" : a node check; null: a new alias) came, went or changed. */
  changed(serviceId: string | null): void {
    if (this.members.size === 0 || this.stopped) return;
    if (serviceId === null) this.dirty = null;
    else this.dirty?.add(serviceId);
    if (this.pass) return;
    this.pass = setImmediate(() => {
      this.pass = undefined;
      const dirty = this.dirty;
      this.dirty = new Set();
      const rows = this.host.inputs();
      for (const t of this.members.values()) {
        const target = this.host.target(t);
        if (dirty && !dirty.has(target.serviceId)) continue;
        const r = aliasResult(rows, { node: '', serviceId: target.serviceId, selfId: target.selfId });
        if (r.status !== target.status || r.output !== target.output) this.host.judged(t, r);
      }
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.pass) clearImmediate(this.pass);
  }
}
