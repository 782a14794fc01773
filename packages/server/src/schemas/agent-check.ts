// Bodies of the agent check endpoints (consul-behaviour Appendix A): a check definition, as sent to
// PUT /v1/agent/check/register, inside a service definition, or in a config file; and the body of
// PUT /v1/agent/check/update/:id. Durations are Go strings ("10s") or nanosecond numbers.
import { Type, type Static } from '@sinclair/typebox';
import { Bool, NullableList, NullableMap, Obj, OneOf, OrNull, Str } from './body-fields';

const duration = () => OneOf<string | number | null>('string', 'number', 'null');
const strList = () => NullableList(Type.String());

/** A check definition's fields, keys canonicalised (any case, snake_case aliases). */
const checkDefinitionFields = {
  CheckID: Str(),
  ID: Str(),
  Name: Str(),
  Status: Str(),
  Notes: Str(),
  ServiceID: Str(),
  TTL: duration(),
  HTTP: Str(),
  Method: Str(),
  Header: NullableMap(Type.Array(Type.String())),
  TLSSkipVerify: Bool(),
  TCP: Str(),
  Interval: duration(),
  Timeout: duration(),
  DeregisterCriticalServiceAfter: duration(),
  /** Script and Docker checks: the command (`Args` is the config files' name for it). */
  ScriptArgs: strList(),
  Args: strList(),
  // A kind Consul 1.4 does not take (Script); accepted by the schema so the refusal can say so.
  Script: Str(),
  DockerContainerID: Str(),
  Shell: Str(),
  GRPC: Str(),
  GRPCUseTLS: Bool(),
  /** Alias checks (Consul 1.3+): mirror the health of a node and/or a service (checks/alias-check.ts). */
  AliasNode: Str(),
  AliasService: Str(),
};

/** `PUT /v1/agent/check/register`: a definition object (not null). */
export const checkRegisterSchema = Obj(checkDefinitionFields);

/** A check definition, keys canonicalised: its own, inside a service definition, or in a config file. */
export type AgentCheckDefinition = Static<typeof checkRegisterSchema>;

/** A check definition where it may be null (a service's `Check`, the config files' walk). */
export const checkDefinitionSchema = OrNull(checkRegisterSchema);

export const checkUpdateSchema = Obj({ Status: Str(), Output: Str() });
export type CheckUpdateBody = Static<typeof checkUpdateSchema>;
