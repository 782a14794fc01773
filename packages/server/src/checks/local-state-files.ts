// The agent's own services and checks on disk, as Consul keeps them: one JSON file per definition
// under `<data-dir>/services` and `<data-dir>/checks` (named by a hash of the ID), and the last
// status of each TTL check under `<data-dir>/checks/state`, so a restart neither forgets them nor
// flips a healthy TTL check to critical; maintenance checks under `<data-dir>/maintenance`. Writes
// to one file are serialised and atomic (rename).
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceDefinition } from '../connect/local-services';
import type { AgentCheckDefinition } from '../schemas/agent-check';

/** A maintenance check as kept under <data-dir>/maintenance (checks/maintenance.ts). */
export interface PersistedMaintenance {
  CheckID: string;
  Name: string;
  Notes: string;
  ServiceID: string;
}

export interface PersistedCheckState {
  CheckID: string;
  Status: string;
  Output: string;
  /** Epoch ms when the TTL runs out. */
  Expires: number;
}

const fileName = (id: string) => createHash('sha256').update(id).digest('hex').slice(0, 32);

export class LocalStateFiles {
  private readonly queues = new Map<string, Promise<void>>();
  private readonly servicesDir: string;
  private readonly checksDir: string;
  private readonly stateDir: string;
  private readonly maintenanceDir: string;

  constructor(dataDir: string) {
    this.servicesDir = join(dataDir, 'services');
    this.checksDir = join(dataDir, 'checks');
    this.stateDir = join(dataDir, 'checks', 'state');
    this.maintenanceDir = join(dataDir, 'maintenance');
  }

  saveService(id: string, def: ServiceDefinition): Promise<void> {
    return this.write(join(this.servicesDir, fileName(id)), { ID: id, Service: def });
  }
  removeService(id: string): Promise<void> {
    return this.remove(join(this.servicesDir, fileName(id)));
  }
  async loadServices(): Promise<ServiceDefinition[]> {
    return (await this.readAll<{ Service?: ServiceDefinition }>(this.servicesDir)).flatMap((f) => (f.Service ? [f.Service] : []));
  }

  saveCheck(id: string, def: AgentCheckDefinition): Promise<void> {
    return this.write(join(this.checksDir, fileName(id)), { ID: id, Check: def });
  }
  removeCheck(id: string): Promise<void> {
    return Promise.all([this.remove(join(this.checksDir, fileName(id))), this.removeCheckState(id)]).then(() => undefined);
  }
  async loadChecks(): Promise<AgentCheckDefinition[]> {
    return (await this.readAll<{ Check?: AgentCheckDefinition }>(this.checksDir)).flatMap((f) => (f.Check ? [f.Check] : []));
  }

  saveCheckState(state: PersistedCheckState): Promise<void> {
    return this.write(join(this.stateDir, fileName(state.CheckID)), state);
  }
  removeCheckState(id: string): Promise<void> {
    return this.remove(join(this.stateDir, fileName(id)));
  }
  async loadCheckState(id: string): Promise<PersistedCheckState | undefined> {
    try {
      const s = JSON.parse(await readFile(join(this.stateDir, fileName(id)), 'utf8')) as PersistedCheckState;
      return s.CheckID === id ? s : undefined;
    } catch {
      return undefined;
    }
  }

  saveMaintenance(check: PersistedMaintenance): Promise<void> {
    return this.write(join(this.maintenanceDir, fileName(check.CheckID)), check);
  }
  removeMaintenance(checkId: string): Promise<void> {
    return this.remove(join(this.maintenanceDir, fileName(checkId)));
  }
  async loadMaintenance(): Promise<PersistedMaintenance[]> {
    return (await this.readAll<PersistedMaintenance>(this.maintenanceDir)).filter((m) => typeof m?.CheckID === 'string');
  }

  /** Resolves when every write queued so far is on disk. */
  async flush(): Promise<void> {
    await Promise.all([...this.queues.values()]);
  }

  private enqueue(path: string, op: () => Promise<void>): Promise<void> {
    const prev = this.queues.get(path) ?? Promise.resolve();
    const next = prev.then(op, op);
    this.queues.set(path, next);
    const forget = () => {
      if (this.queues.get(path) === next) this.queues.delete(path);
    };
    next.then(forget, forget);
    return next;
  }

  private write(path: string, value: unknown): Promise<void> {
    return this.enqueue(path, async () => {
      await mkdir(join(path, '..'), { recursive: true });
      const tmp = `${path}.tmp`;
      await writeFile(tmp, JSON.stringify(value), { mode: 0o600 });
      await rename(tmp, path);
    });
  }

  private remove(path: string): Promise<void> {
    return this.enqueue(path, () => rm(path, { force: true }));
  }

  private async readAll<T>(dir: string): Promise<T[]> {
    let names: string[];
    try {
      names = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isFile() && !d.name.endsWith('.tmp')).map((d) => d.name).sort();
    } catch {
      return [];
    }
    const out: T[] = [];
    for (const name of names) {
      try {
        out.push(JSON.parse(await readFile(join(dir, name), 'utf8')) as T);
      } catch {
        // A file cut short by a crash mid-write (before the rename) is skipped, not fatal.
      }
    }
    return out;
  }
}
