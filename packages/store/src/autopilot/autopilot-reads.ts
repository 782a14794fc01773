// The autopilot configuration as stored, or the defaults (indexes 0) before it is first set.
import type { IndexTable } from '../index-table';
import { queryResult, type QueryResult } from '../query-result';
import { AUTOPILOT_CONFIG, DEFAULT_AUTOPILOT, type AutopilotRecord } from './autopilot-records';
import type { AutopilotTable } from './autopilot-table';

export function autopilotConfig(t: AutopilotTable, indexes: IndexTable): QueryResult<AutopilotRecord> {
  return queryResult(indexes, [AUTOPILOT_CONFIG], t.config ?? { ...DEFAULT_AUTOPILOT, CreateIndex: 0, ModifyIndex: 0 });
}
