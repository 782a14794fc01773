// Bodies of the agent-lifecycle and operator endpoints: PUT /v1/agent/token/:kind and
// PUT /v1/operator/autopilot/configuration (durations as Go strings or integer nanoseconds, as the
// Go client's ReadableDuration may send either).
import type { SchemaNode } from './canonical-keys';

const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
// null: the Go client's nil *ReadableDuration, which Consul reads as 0.
const duration = { type: ['string', 'integer', 'null'] } as const;

export interface AgentTokenBody {
  Token?: string;
}

export const agentTokenSchema: SchemaNode = {
  type: 'object',
  properties: { Token: str },
};

export interface AutopilotConfigBody {
  CleanupDeadServers?: boolean;
  LastContactThreshold?: string | number | null;
  MaxTrailingLogs?: number;
  ServerStabilizationTime?: string | number | null;
  RedundancyZoneTag?: string;
  DisableUpgradeMigration?: boolean;
  UpgradeVersionTag?: string;
  CreateIndex?: number;
  ModifyIndex?: number;
}

export const autopilotConfigSchema: SchemaNode = {
  type: 'object',
  properties: {
    CleanupDeadServers: bool,
    LastContactThreshold: duration,
    MaxTrailingLogs: { type: 'integer', minimum: 0 },
    ServerStabilizationTime: duration,
    RedundancyZoneTag: str,
    DisableUpgradeMigration: bool,
    UpgradeVersionTag: str,
    CreateIndex: { type: 'integer' },
    ModifyIndex: { type: 'integer' },
  },
};
