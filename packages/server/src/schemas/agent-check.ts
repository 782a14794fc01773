// Bodies of the agent check endpoints (consul-behaviour Appendix A): a check definition, as sent to
// PUT /v1/agent/check/register, inside a service definition, or in a config file; and the body of
// PUT /v1/agent/check/update/:id. Durations are Go strings ("10s") or nanosecond numbers.
import type { SchemaNode } from './canonical-keys';

const str = { type: 'string' } as const;
const duration = { type: ['string', 'number', 'null'] } as const;
const strList = { type: ['array', 'null'], items: str } as const;

/** A check definition, keys canonicalised (any case, snake_case aliases). */
export interface AgentCheckDefinition {
  CheckID?: string;
  ID?: string;
  Name?: string;
  Status?: string;
  Notes?: string;
  ServiceID?: string;
  TTL?: string | number | null;
  HTTP?: string;
  Method?: string;
  Header?: Record<string, string[]> | null;
  TLSSkipVerify?: boolean;
  TCP?: string;
  Interval?: string | number | null;
  Timeout?: string | number | null;
  DeregisterCriticalServiceAfter?: string | number | null;
  /** Script and Docker checks: the command (`Args` is the config files' name for it). */
  ScriptArgs?: string[] | null;
  Args?: string[] | null;
  DockerContainerID?: string;
  Shell?: string;
  GRPC?: string;
  GRPCUseTLS?: boolean;
  // A kind Consul 1.4 does not take (Script); accepted by the schema so the refusal can say so.
  Script?: string;
  /** Alias checks (Consul 1.3+): mirror the health of a node and/or a service (checks/alias-check.ts). */
  AliasNode?: string;
  AliasService?: string;
}

export const checkDefinitionSchema: SchemaNode = {
  type: ['object', 'null'],
  properties: {
    CheckID: str,
    ID: str,
    Name: str,
    Status: str,
    Notes: str,
    ServiceID: str,
    TTL: duration,
    HTTP: str,
    Method: str,
    Header: { type: ['object', 'null'], additionalProperties: { type: 'array', items: str } },
    TLSSkipVerify: { type: 'boolean' },
    TCP: str,
    Interval: duration,
    Timeout: duration,
    DeregisterCriticalServiceAfter: duration,
    ScriptArgs: strList,
    Args: strList,
    Script: str,
    DockerContainerID: str,
    Shell: str,
    GRPC: str,
    GRPCUseTLS: { type: 'boolean' },
    AliasNode: str,
    AliasService: str,
  },
};

/** `PUT /v1/agent/check/register`: a definition object (not null). */
export const checkRegisterSchema: SchemaNode = { ...checkDefinitionSchema, type: 'object' };

export interface CheckUpdateBody {
  Status?: string;
  Output?: string;
}

export const checkUpdateSchema: SchemaNode = {
  type: 'object',
  properties: { Status: str, Output: str },
};
