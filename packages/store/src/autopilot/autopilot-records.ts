// Autopilot's configuration (Consul's autopilot.Config, `/v1/operator/autopilot/configuration`),
// replicated so that every server, and the next leader, uses the same one.

/** Watch key of the autopilot configuration. */
export const AUTOPILOT_CONFIG = 'autopilot-config';

/** The settings, durations in nanoseconds (as Go holds them). */
export interface AutopilotSettings {
  CleanupDeadServers: boolean;
  LastContactThresholdNs: number;
  MaxTrailingLogs: number;
  ServerStabilizationTimeNs: number;
  RedundancyZoneTag: string;
  DisableUpgradeMigration: boolean;
  UpgradeVersionTag: string;
}

export interface AutopilotRecord extends AutopilotSettings {
  CreateIndex: number;
  ModifyIndex: number;
}

/** Consul's defaults (agent/config/default.go `autopilot`), used until the configuration is first set. */
export const DEFAULT_AUTOPILOT: AutopilotSettings = {
  CleanupDeadServers: true,
  LastContactThresholdNs: 200_000_000,
  MaxTrailingLogs: 250,
  ServerStabilizationTimeNs: 10_000_000_000,
  RedundancyZoneTag: '',
  DisableUpgradeMigration: false,
  UpgradeVersionTag: '',
};
