// Request bodies of the catalog endpoints (spec "Catalog entities"; consul-behaviour §5.2–5.3).
import type { SchemaNode } from './canonical-keys';
import { nodeMetaProblem } from './node-meta';
import { BODY_CHECK, type CheckedSchema } from './validator';

const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const int = { type: 'integer' } as const;
const strMap = { type: ['object', 'null'], additionalProperties: { type: 'string' } } as const;
const anyMap = { type: ['object', 'null'] } as const;
const strList = { type: ['array', 'null'], items: str } as const;

export const proxySchema: SchemaNode = {
  type: ['object', 'null'],
  properties: {
    DestinationServiceName: str,
    DestinationServiceID: str,
    LocalServiceAddress: str,
    LocalServicePort: int,
    Config: anyMap,
    Upstreams: { type: ['array', 'null'], items: { type: 'object' } },
  },
};

export const serviceSchema: SchemaNode = {
  type: ['object', 'null'],
  properties: {
    ID: str,
    Service: str,
    Tags: strList,
    Address: str,
    Meta: strMap,
    Port: int,
    Weights: { type: ['object', 'null'], properties: { Passing: int, Warning: int } },
    EnableTagOverride: bool,
    Kind: str,
    ProxyDestination: str,
    Proxy: proxySchema,
    Connect: {
      type: ['object', 'null'],
      properties: { Native: bool, Proxy: anyMap, SidecarService: anyMap },
    },
  },
};

export const checkSchema: SchemaNode = {
  type: 'object',
  properties: {
    Node: str,
    CheckID: str,
    Name: str,
    Status: str,
    Notes: str,
    Output: str,
    ServiceID: str,
    Definition: {
      type: ['object', 'null'],
      properties: {
        HTTP: str,
        TLSSkipVerify: bool,
        Header: { type: ['object', 'null'] },
        Method: str,
        TCP: str,
        Interval: str,
        Timeout: str,
        DeregisterCriticalServiceAfter: str,
      },
    },
  },
};

export const registerSchema: CheckedSchema = {
  type: 'object',
  properties: {
    ID: str,
    Node: str,
    Address: str,
    Datacenter: str,
    TaggedAddresses: strMap,
    NodeMeta: strMap,
    Service: serviceSchema,
    Check: { ...checkSchema, type: ['object', 'null'] },
    Checks: { type: ['array', 'null'], items: checkSchema },
    SkipNodeUpdate: bool,
  },
  [BODY_CHECK]: (body: { NodeMeta?: Record<string, string> | null }) => {
    const problem = nodeMetaProblem(body.NodeMeta);
    return problem && `Invalid Node Meta: ${problem}`;
  },
};

export const deregisterSchema: SchemaNode = {
  type: 'object',
  properties: { Node: str, Datacenter: str, ServiceID: str, CheckID: str },
};
