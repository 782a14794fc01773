// Bodies of the connect endpoints: CA configuration (consul-behaviour §7.4) and authorize (§7.1).
import type { SchemaNode } from './canonical-keys';

const str = { type: 'string' } as const;

export const caConfigSchema: SchemaNode = {
  type: 'object',
  properties: {
    Provider: str,
    Config: {
      type: ['object', 'null'],
      properties: {
        // Go's client sends a time.Duration as integer nanoseconds; others send "72h".
        LeafCertTTL: { type: ['string', 'integer'] },
        RotationPeriod: { type: ['string', 'integer'] },
        PrivateKeyType: str,
        PrivateKeyBits: { type: 'integer' },
        PrivateKey: str,
        RootCert: str,
      },
    },
    RotateRoot: { type: 'boolean' },
  },
};

export const authorizeSchema: SchemaNode = {
  type: 'object',
  properties: { Target: str, ClientCertURI: str, ClientCertSerial: str },
};
