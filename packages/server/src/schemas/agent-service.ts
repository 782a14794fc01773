// `PUT /v1/agent/service/register` (a ServiceDefinition; consul-behaviour Appendix A), snake_case
// aliases accepted through key canonicalisation.
import { Type, type Static } from '@sinclair/typebox';
import { AnyMap, AnyObject, Bool, NullableList, NullableObj, Obj, Opt, OrNull, Str } from './body-fields';
import { sharedServiceFields } from './catalog';
import { checkRegisterSchema } from './agent-check';

const strList = () => NullableList(Type.String());

const managedProxySchema = NullableObj({
  ExecMode: Str(),
  Command: strList(),
  Config: AnyMap(),
  Upstreams: NullableList(AnyObject()),
});

const base = {
  ID: Str(),
  Name: Str(),
  ...sharedServiceFields,
  // The full check definition (TTL, HTTP, TCP and their options), shared with /v1/agent/check/register.
  Check: Opt(OrNull(checkRegisterSchema)),
  Checks: NullableList(checkRegisterSchema),
};

const sidecarSchema = NullableObj(base);

export const agentServiceSchema = Obj({
  ...base,
  Connect: NullableObj({ Native: Bool(), Proxy: managedProxySchema, SidecarService: sidecarSchema }),
});
/** A service definition as the HTTP API and config files take it, keys canonicalised. */
export type AgentServiceBody = Static<typeof agentServiceSchema>;
