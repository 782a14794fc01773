// Bodies of the agent-lifecycle and operator endpoints: PUT /v1/agent/token/:kind and
// PUT /v1/operator/autopilot/configuration (durations as Go strings or integer nanoseconds, as the
// Go client's ReadableDuration may send either).
import type { Static } from '@sinclair/typebox';
import { Bool, Int, Obj, OneOf, Str } from './body-fields';

// null: the Go client's nil *ReadableDuration, which Consul reads as 0.
const duration = () => OneOf<string | number | null>('string', 'integer', 'null');

export const agentTokenSchema = Obj({ Token: Str() });
export type AgentTokenBody = Static<typeof agentTokenSchema>;

export const autopilotConfigSchema = Obj({
  CleanupDeadServers: Bool(),
  LastContactThreshold: duration(),
  MaxTrailingLogs: Int({ minimum: 0 }),
  ServerStabilizationTime: duration(),
  RedundancyZoneTag: Str(),
  DisableUpgradeMigration: Bool(),
  UpgradeVersionTag: Str(),
  CreateIndex: Int(),
  ModifyIndex: Int(),
});
export type AutopilotConfigBody = Static<typeof autopilotConfigSchema>;
