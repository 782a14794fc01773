// PUT /v1/connect/ca/configuration (consul-behaviour §7.4): settings that do not touch the key are
// stored as they are; a new key type/size (or `RotateRoot: true`, a registry extension since the
// built-in provider makes its own keys) rotates the root: a new root, cross-signed by the old one so
// leaves already issued keep verifying, becomes active and the old one stays listed until they expire.
import { crossSign, generateRoot } from '@registry/ca';
import { formatGoDuration, parseGoDuration, type CaSettings, type Command, type SerialBlock, type Store } from '@registry/store';
import { badRequest, serverError } from '../errors';
import { CA_PROVIDER, DEFAULT_CA_SETTINGS } from './ca-leader';
import { CA_NOT_READY } from './leaf-signer';

export interface CaConfigBody {
  Provider?: string;
  Config?: {
    LeafCertTTL?: string | number;
    RotationPeriod?: string | number;
    PrivateKeyType?: string;
    PrivateKeyBits?: number;
    PrivateKey?: string;
    RootCert?: string;
  } | null;
  RotateRoot?: boolean;
}

const HOUR_NS = 3.6e12;

/** A duration as a string ("72h") or as Go marshals a time.Duration (integer nanoseconds), stored as a string. */
function durationText(v: string | number | undefined, name: string): string | undefined {
  if (typeof v !== 'number') return v || undefined;
  if (!Number.isInteger(v) || v < 0) throw badRequest(`error configuring provider: invalid ${name} ${v}: expected a duration`);
  return v === 0 ? undefined : formatGoDuration(v);
}

/** The settings a body asks for (missing ones take the provider defaults), or a 400. */
export function requestedSettings(body: CaConfigBody): CaSettings {
  const provider = body.Provider || CA_PROVIDER;
  if (provider !== CA_PROVIDER) throw badRequest(`could not initialize provider: unknown CA provider ${JSON.stringify(provider)}`);
  const c = body.Config ?? {};
  if (c.PrivateKey || c.RootCert) {
    throw badRequest('error configuring provider: PrivateKey and RootCert cannot be set: the built-in CA generates its own keys');
  }
  const s: CaSettings = {
    LeafCertTTL: durationText(c.LeafCertTTL, 'LeafCertTTL') ?? DEFAULT_CA_SETTINGS.LeafCertTTL,
    RotationPeriod: durationText(c.RotationPeriod, 'RotationPeriod') ?? DEFAULT_CA_SETTINGS.RotationPeriod,
    PrivateKeyType: c.PrivateKeyType || DEFAULT_CA_SETTINGS.PrivateKeyType,
    PrivateKeyBits: c.PrivateKeyBits || (c.PrivateKeyType === 'rsa' ? 2048 : DEFAULT_CA_SETTINGS.PrivateKeyBits),
  };
  const ttl = parseGoDuration(s.LeafCertTTL);
  if (ttl === undefined) throw badRequest(`error configuring provider: invalid LeafCertTTL ${JSON.stringify(s.LeafCertTTL)}`);
  if (ttl < HOUR_NS) throw badRequest('error configuring provider: LeafCertTTL must be at least 1h');
  if (ttl > 8760 * HOUR_NS) throw badRequest('error configuring provider: LeafCertTTL must be less than 8760h');
  if (parseGoDuration(s.RotationPeriod) === undefined) {
    throw badRequest(`error configuring provider: invalid RotationPeriod ${JSON.stringify(s.RotationPeriod)}`);
  }
  if (s.PrivateKeyType === 'ec') {
    if (s.PrivateKeyBits !== 256 && s.PrivateKeyBits !== 384) throw badRequest('error configuring provider: EC keys must be 256 or 384 bits');
  } else if (s.PrivateKeyType === 'rsa') {
    if (s.PrivateKeyBits < 2048 || s.PrivateKeyBits > 8192 || s.PrivateKeyBits % 8 !== 0) {
      throw badRequest('error configuring provider: RSA keys must be 2048 to 8192 bits');
    }
  } else {
    throw badRequest(`error configuring provider: unknown PrivateKeyType ${JSON.stringify(s.PrivateKeyType)}: must be "ec" or "rsa"`);
  }
  return s;
}

export interface CaConfigDeps {
  store: Store;
  /** Allocate serials (an internal command, no ACL check). */
  applyInternal(cmd: Command): Promise<unknown>;
  /** A command checked against the caller's token (operator:write) on the leader. */
  applyAsCaller(cmd: Command): Promise<unknown>;
  now?: () => Date;
}

/** What the PUT changed: nothing, the settings, or the root. */
export type CaConfigOutcome = 'unchanged' | 'settings' | 'rotated';

export async function updateCaConfig(body: CaConfigBody, deps: CaConfigDeps): Promise<CaConfigOutcome> {
  const settings = requestedSettings(body);
  const current = deps.store.caConfigRecord();
  const active = deps.store.caSigningRoot();
  if (!current || !active) throw serverError(CA_NOT_READY);
  const keyChanged = settings.PrivateKeyType !== current.Config.PrivateKeyType || settings.PrivateKeyBits !== current.Config.PrivateKeyBits;
  if (!keyChanged && !body.RotateRoot) {
    // Compared as durations: "72h", "72h0m0s" and 259200000000000 ns are the same setting.
    const sameDuration = (a: string, b: string) => parseGoDuration(a) === parseGoDuration(b);
    const same = sameDuration(settings.LeafCertTTL, current.Config.LeafCertTTL) && sameDuration(settings.RotationPeriod, current.Config.RotationPeriod);
    if (same) return 'unchanged';
    await deps.applyAsCaller({ type: 'ca.set-config', Config: settings });
    return 'settings';
  }
  const now = deps.now?.() ?? new Date();
  const block = (await deps.applyInternal({ type: 'ca.serials', count: 2 })) as SerialBlock;
  const fresh = generateRoot({
    clusterId: current.ClusterID,
    trustDomain: current.TrustDomain,
    keyType: settings.PrivateKeyType as 'ec' | 'rsa',
    keyBits: settings.PrivateKeyBits,
    serial: block.first,
    now,
  });
  const bridge = crossSign({ oldRoot: active, newRoot: fresh, serial: block.first + 1, now });
  await deps.applyAsCaller({
    type: 'ca.rotate',
    previousRootId: active.ID,
    root: { ...fresh, IntermediateCerts: [bridge] },
    Config: settings,
    now: now.toISOString(),
  });
  return 'rotated';
}
