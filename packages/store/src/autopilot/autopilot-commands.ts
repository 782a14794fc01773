// autopilot.set-config: replace the configuration, or with `cas` only when its ModifyIndex is
// still `cas` (0 = not set yet). Answers whether it was written, as Consul's
// Operator.AutopilotSetConfiguration does.
import { CommandError } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { bool, int, optObject, str } from '../input-fields';
import type { AutopilotSettings } from './autopilot-records';

export interface AutopilotSetConfigCommand {
  config: AutopilotSettings;
  /** Compare-and-set index; absent for an unconditional write. */
  cas?: number;
}

export const autopilotSetConfig: CommandHandler<AutopilotSetConfigCommand> = (state, cmd) => {
  const c = optObject(cmd.config, 'config');
  if (!c) return new CommandError('Invalid field config: expected an object');
  const settings: AutopilotSettings = {
    CleanupDeadServers: bool(c, 'CleanupDeadServers', 'config'),
    LastContactThresholdNs: int(c, 'LastContactThresholdNs', 'config'),
    MaxTrailingLogs: int(c, 'MaxTrailingLogs', 'config'),
    ServerStabilizationTimeNs: int(c, 'ServerStabilizationTimeNs', 'config'),
    RedundancyZoneTag: str(c, 'RedundancyZoneTag', 'config'),
    DisableUpgradeMigration: bool(c, 'DisableUpgradeMigration', 'config'),
    UpgradeVersionTag: str(c, 'UpgradeVersionTag', 'config'),
  };
  if (settings.LastContactThresholdNs < 0 || settings.ServerStabilizationTimeNs < 0 || settings.MaxTrailingLogs < 0) {
    return new CommandError('autopilot durations and MaxTrailingLogs must not be negative');
  }
  const cas = cmd.cas ?? undefined;
  if (cas !== undefined && (typeof cas !== 'number' || !Number.isSafeInteger(cas) || cas < 0)) {
    return new CommandError('Invalid field cas: expected a non-negative integer');
  }
  const current = state.autopilot.config?.ModifyIndex ?? 0;
  if (cas !== undefined && cas !== current) return () => false;
  return (txn) => {
    state.autopilot.set(settings, txn);
    return true;
  };
};
