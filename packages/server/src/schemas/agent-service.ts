// `PUT /v1/agent/service/register` (a ServiceDefinition; consul-behaviour Appendix A), snake_case
// aliases accepted through key canonicalisation.
import type { SchemaNode } from './canonical-keys';
import { proxySchema } from './catalog';
import { checkDefinitionSchema } from './agent-check';

const str = { type: 'string' } as const;
const strList = { type: ['array', 'null'], items: str } as const;

// The full check definition (TTL, HTTP, TCP and their options), shared with /v1/agent/check/register.
const checkSchema: SchemaNode = { ...checkDefinitionSchema, type: 'object' };

const managedProxySchema: SchemaNode = {
  type: ['object', 'null'],
  properties: {
    ExecMode: str,
    Command: strList,
    Config: { type: ['object', 'null'] },
    Upstreams: { type: ['array', 'null'], items: { type: 'object' } },
  },
};

const base = {
  ID: str,
  Name: str,
  Tags: strList,
  Address: str,
  Meta: { type: ['object', 'null'], additionalProperties: str },
  Port: { type: 'integer' },
  Weights: { type: ['object', 'null'], properties: { Passing: { type: 'integer' }, Warning: { type: 'integer' } } },
  EnableTagOverride: { type: 'boolean' },
  Kind: str,
  ProxyDestination: str,
  Proxy: proxySchema,
  Check: { ...checkSchema, type: ['object', 'null'] },
  Checks: { type: ['array', 'null'], items: checkSchema },
} as const;

const sidecarSchema: SchemaNode = { type: ['object', 'null'], properties: base };

export const agentServiceSchema: SchemaNode = {
  type: 'object',
  properties: {
    ...base,
    Connect: {
      type: ['object', 'null'],
      properties: { Native: { type: 'boolean' }, Proxy: managedProxySchema, SidecarService: sidecarSchema },
    },
  },
};
