// The CA table: configuration, roots (active first, then rotated-out ones until they retire) and the
// cluster-wide serial counter shared by roots, leaves and cross-signed certificates.
import type { Txn } from '../txn';
import type { CaConfigRecord, StoredRoot } from './records';

export const CA_ROOTS = 'ca-roots';
export const CA_CONFIG = 'ca-config';

export interface CaTableDump {
  config: CaConfigRecord | null;
  roots: StoredRoot[];
  serial: number;
}

const copyRoot = (r: StoredRoot): StoredRoot => ({ ...r, IntermediateCerts: r.IntermediateCerts ? [...r.IntermediateCerts] : null });

export class CaTable {
  private configRow: CaConfigRecord | null = null;
  private rootRows: StoredRoot[] = [];
  private lastSerial = 0;

  get config(): CaConfigRecord | null {
    return this.configRow && { ...this.configRow, Config: { ...this.configRow.Config } };
  }

  /** Every root, copied, the active one first. */
  get roots(): StoredRoot[] {
    return this.rootRows.map(copyRoot);
  }

  get activeRoot(): StoredRoot | undefined {
    const r = this.rootRows.find((x) => x.Active);
    return r && copyRoot(r);
  }

  /** The highest serial number handed out so far. */
  get serial(): number {
    return this.lastSerial;
  }

  setConfig(c: CaConfigRecord, txn: Txn): void {
    this.configRow = { ...c, Config: { ...c.Config } };
    txn.bump(CA_CONFIG);
  }

  setRoots(roots: StoredRoot[], txn: Txn): void {
    this.rootRows = [...roots].sort((a, b) => Number(b.Active) - Number(a.Active)).map(copyRoot);
    txn.bump(CA_ROOTS);
  }

  /** Reserve `count` serials; returns the first. Not a watched change: no read shows the counter. */
  allocateSerials(count: number): number {
    const first = this.lastSerial + 1;
    this.lastSerial += count;
    return first;
  }

  /** Never hand out a serial at or below one already in use (a root brought its own). */
  raiseSerial(atLeast: number): void {
    this.lastSerial = Math.max(this.lastSerial, atLeast);
  }

  dump(): CaTableDump {
    return { config: this.config, roots: this.roots, serial: this.lastSerial };
  }

  static load(dump: CaTableDump | undefined): CaTable {
    const t = new CaTable();
    if (!dump) return t;
    t.configRow = dump.config ? { ...dump.config, Config: { ...dump.config.Config } } : null;
    t.rootRows = (dump.roots ?? []).map(copyRoot);
    t.lastSerial = dump.serial ?? 0;
    return t;
  }
}
