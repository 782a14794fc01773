// Bodies of the connect endpoints: CA configuration (consul-behaviour §7.4) and authorize (§7.1).
import type { Static } from '@sinclair/typebox';
import { Bool, Int, NullableObj, Obj, OneOf, Str } from './body-fields';

// Go's client sends a time.Duration as integer nanoseconds; others send "72h".
const duration = () => OneOf<string | number>('string', 'integer');

export const caConfigSchema = Obj({
  Provider: Str(),
  Config: NullableObj({
    LeafCertTTL: duration(),
    RotationPeriod: duration(),
    PrivateKeyType: Str(),
    PrivateKeyBits: Int(),
    PrivateKey: Str(),
    RootCert: Str(),
  }),
  RotateRoot: Bool(),
});
export type CaConfigBody = Static<typeof caConfigSchema>;

export const authorizeSchema = Obj({ Target: Str(), ClientCertURI: Str(), ClientCertSerial: Str() });
export type AuthorizeBody = Static<typeof authorizeSchema>;
