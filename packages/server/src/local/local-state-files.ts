// The agent's own services and checks on disk, as Consul keeps them: one JSON file per definition
// under `<data-dir>/services` and `<data-dir>/checks` (named by a hash of the ID), and the last
// status of each TTL check under `<data-dir>/checks/state`, so a restart neither forgets them nor
// flips a healthy TTL check to critical; maintenance checks under `<data-dir>/maintenance`. Writes
// to one file are serialised and durable (runtime/durable-file.ts: temp file, fsync, rename, fsync of
// the directory), so a registration answered 200 survives a power cut. A file that no longer
// loads is renamed aside to `<file>.bad` with a logged reason: never fatal, never silently dropped.
import { createHash } from 'node:crypto';
import { readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirDurably, removeFileDurably, syncDir, writeFileDurably } from '../runtime/durable-file';
import type { Logger } from '../runtime/logger';
import type { ServiceDefinition } from './local-services';
import type { AgentCheckDefinition } from '../schemas/agent-check';

/** A maintenance check as kept under <data-dir>/maintenance (maintenance.ts). */
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

/** The suffix of a definition set aside because it no longer loads. */
export const SET_ASIDE_SUFFIX = '.bad';

/** A definition read back, with the file it came from (to set aside if it no longer registers). */
export interface Persisted<T> {
  file: string;
  def: T;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class LocalStateFiles {
  private readonly queues = new Map<string, Promise<void>>();
  private readonly servicesDir: string;
  private readonly checksDir: string;
  private readonly stateDir: string;
  private readonly maintenanceDir: string;

  constructor(
    dataDir: string,
    private readonly logger?: Logger,
  ) {
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
  async loadServices(): Promise<Persisted<ServiceDefinition>[]> {
    const files = await this.readAll(this.servicesDir, (f) => typeof f.ID === 'string' && isObject(f.Service));
    return files.map(({ file, value }) => ({ file, def: value.Service as ServiceDefinition }));
  }

  saveCheck(id: string, def: AgentCheckDefinition): Promise<void> {
    return this.write(join(this.checksDir, fileName(id)), { ID: id, Check: def });
  }
  removeCheck(id: string): Promise<void> {
    return Promise.all([this.remove(join(this.checksDir, fileName(id))), this.removeCheckState(id)]).then(() => undefined);
  }
  async loadChecks(): Promise<Persisted<AgentCheckDefinition>[]> {
    const files = await this.readAll(this.checksDir, (f) => typeof f.ID === 'string' && isObject(f.Check));
    return files.map(({ file, value }) => ({ file, def: value.Check as AgentCheckDefinition }));
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
    return (await this.readAll(this.maintenanceDir, (m) => typeof m.CheckID === 'string')).map(({ value }) => value as unknown as PersistedMaintenance);
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
      await makeDirDurably(join(path, '..'));
      await writeFileDurably(path, JSON.stringify(value));
    });
  }

  private remove(path: string): Promise<void> {
    return this.enqueue(path, () => removeFileDurably(path));
  }

  /** Rename a definition file that no longer loads to `<file>.bad` (replacing an older one), so the next start does not trip on it again. */
  setAside(path: string, reason: string): Promise<void> {
    return this.enqueue(path, async () => {
      try {
        await rename(path, path + SET_ASIDE_SUFFIX);
        await syncDir(join(path, '..'));
        this.logger?.error({ file: path, keptAs: path + SET_ASIDE_SUFFIX, reason }, 'a persisted definition no longer loads; skipped and set aside');
      } catch (err) {
        this.logger?.error({ file: path, reason, err: (err as Error).message }, 'a persisted definition no longer loads; skipped (could not set it aside)');
      }
    });
  }

  /** Every definition file in `dir` that parses and has the expected shape; the others are set aside. */
  private async readAll(dir: string, wellFormed: (f: Record<string, unknown>) => boolean): Promise<{ file: string; value: Record<string, unknown> }[]> {
    let names: string[];
    try {
      names = (await readdir(dir, { withFileTypes: true }))
        .filter((d) => d.isFile() && !d.name.endsWith('.tmp') && !d.name.endsWith(SET_ASIDE_SUFFIX))
        .map((d) => d.name)
        .sort();
    } catch {
      return [];
    }
    const out: { file: string; value: Record<string, unknown> }[] = [];
    for (const name of names) {
      // (A write cut short before its rename leaves only a .tmp file, skipped above.)
      let parsed: unknown;
      try {
        parsed = JSON.parse(await readFile(join(dir, name), 'utf8'));
      } catch (err) {
        await this.setAside(join(dir, name), `unreadable: ${(err as Error).message}`);
        continue;
      }
      if (isObject(parsed) && wellFormed(parsed)) out.push({ file: join(dir, name), value: parsed });
      else await this.setAside(join(dir, name), 'not a definition this agent wrote (unexpected shape)');
    }
    return out;
  }
}
