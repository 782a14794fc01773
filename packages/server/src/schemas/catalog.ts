// Request bodies of the catalog endpoints (spec "Catalog entities"; consul-behaviour §5.2–5.3).
import { Type, type Static } from '@sinclair/typebox';
import { AnyMap, AnyObject, Bool, Int, NullableList, NullableObj, Obj, Opt, OrNull, Str, StrMap } from './body-fields';
import { nodeMetaProblem } from './node-meta';
import { withCheck } from './validator';

const strList = () => NullableList(Type.String());

export const proxySchema = OrNull(
  Obj({
    DestinationServiceName: Str(),
    DestinationServiceID: Str(),
    LocalServiceAddress: Str(),
    LocalServicePort: Int(),
    Config: AnyMap(),
    Upstreams: NullableList(AnyObject()),
  }),
);

/**
 * The fields a service has in both its catalog form and its agent definition (schemas/agent-service.ts),
 * in the order both validate them (ajv reports the first failing field, so the order is part of the 400).
 */
export const sharedServiceFields = {
  Tags: strList(),
  Address: Str(),
  Meta: StrMap(),
  Port: Int(),
  Weights: NullableObj({ Passing: Int(), Warning: Int() }),
  EnableTagOverride: Bool(),
  Kind: Str(),
  ProxyDestination: Str(),
  Proxy: Opt(proxySchema),
};

export const serviceFields = {
  ID: Str(),
  Service: Str(),
  ...sharedServiceFields,
  Connect: NullableObj({ Native: Bool(), Proxy: AnyMap(), SidecarService: AnyMap() }),
};
export const serviceSchema = OrNull(Obj(serviceFields));

export const checkFields = {
  Node: Str(),
  CheckID: Str(),
  Name: Str(),
  Status: Str(),
  Notes: Str(),
  Output: Str(),
  ServiceID: Str(),
  Definition: NullableObj({
    HTTP: Str(),
    TLSSkipVerify: Bool(),
    Header: AnyMap(),
    Method: Str(),
    TCP: Str(),
    Interval: Str(),
    Timeout: Str(),
    DeregisterCriticalServiceAfter: Str(),
  }),
};
export const checkSchema = Obj(checkFields);

export const registerSchema = withCheck(
  Obj({
    ID: Str(),
    Node: Str(),
    Address: Str(),
    Datacenter: Str(),
    TaggedAddresses: StrMap(),
    NodeMeta: StrMap(),
    Service: Opt(serviceSchema),
    Check: Opt(OrNull(checkSchema)),
    Checks: NullableList(checkSchema),
    SkipNodeUpdate: Bool(),
  }),
  (body) => {
    const problem = nodeMetaProblem(body.NodeMeta);
    return problem && `Invalid Node Meta: ${problem}`;
  },
);
export type RegisterBody = Static<typeof registerSchema>;

export const deregisterSchema = Obj({ Node: Str(), Datacenter: Str(), ServiceID: Str(), CheckID: Str() });
export type DeregisterBody = Static<typeof deregisterSchema>;
