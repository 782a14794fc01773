// The autopilot configuration: one row, absent until first set (reads then show the defaults).
import type { Txn } from '../txn';
import { AUTOPILOT_CONFIG, type AutopilotRecord, type AutopilotSettings } from './autopilot-records';
import { withIndexes } from '../indexed-record';

export interface AutopilotTableDump {
  config: AutopilotRecord | null;
}

export class AutopilotTable {
  private row: AutopilotRecord | null = null;

  get config(): AutopilotRecord | null {
    return this.row && { ...this.row };
  }

  set(settings: AutopilotSettings, txn: Txn): AutopilotRecord {
    this.row = withIndexes(settings, this.row?.CreateIndex ?? txn.index, txn.index);
    txn.bump(AUTOPILOT_CONFIG);
    return { ...this.row };
  }

  dump(): AutopilotTableDump {
    return { config: this.config };
  }

  static load(dump: AutopilotTableDump | undefined): AutopilotTable {
    const t = new AutopilotTable();
    t.row = dump?.config ? { ...dump.config } : null;
    return t;
  }
}
