// `connect.ca_config` (the CA's settings when the cluster's CA is first made, `cluster_id` included)
// and `ports.proxy_min_port` / `proxy_max_port`, `sidecar_min_port` / `sidecar_max_port` (the ports
// handed to managed proxies and sidecars). Consul takes ca_config keys in snake_case or as the
// provider's field names; both are read here.
import { parseGoDuration, type CaSettings } from '@registry/store';
import { requestedSettings } from '../connect/ca-config';
import { isUUID } from '@registry/acl';


/** What the leader starts the CA with on the cluster's first leadership (connect/ca-leader.ts). */
export interface CaBootstrapConfig {
  /** Makes the trust domain `<cluster_id>.registry`; undefined → a random UUID. */
  clusterId?: string;
  leafCertTtl?: string | number;
  rotationPeriod?: string | number;
  privateKeyType?: string;
  privateKeyBits?: number;
}

export interface PortRange {
  min: number;
  max: number;
}

export const DEFAULT_PROXY_PORTS: PortRange = { min: 20000, max: 20255 };
export const DEFAULT_SIDECAR_PORTS: PortRange = { min: 21000, max: 21255 };

type Json = Record<string, unknown>;

/** The value of `snake` or `Camel` in `map` (the first that is set). */
function either(map: Json, snake: string, camel: string): unknown {
  return map[snake] !== undefined ? map[snake] : map[camel];
}

export function applyCaConfig(out: CaBootstrapConfig, caConfig: unknown, source: string): CaBootstrapConfig {
  if (caConfig === undefined || caConfig === null) return out;
  if (typeof caConfig !== 'object' || Array.isArray(caConfig)) throw new Error(`${source}: connect.ca_config must be an object`);
  const c = caConfig as Json;
  const next: CaBootstrapConfig = { ...out };
  const clusterId = either(c, 'cluster_id', 'ClusterID');
  if (clusterId !== undefined) {
    // Consul: "connect CA config cluster_id specified but is not a valid UUID, aborting startup".
    if (typeof clusterId !== 'string' || !isUUID(clusterId)) {
      throw new Error(`${source}: connect.ca_config.cluster_id must be a UUID, got ${JSON.stringify(clusterId)}`);
    }
    next.clusterId = clusterId.toLowerCase();
  }
  for (const [snake, camel, field] of [
    ['leaf_cert_ttl', 'LeafCertTTL', 'leafCertTtl'],
    ['rotation_period', 'RotationPeriod', 'rotationPeriod'],
  ] as const) {
    const v = either(c, snake, camel);
    if (v === undefined) continue;
    const ok = typeof v === 'string' ? parseGoDuration(v) !== undefined : typeof v === 'number' && Number.isInteger(v) && v >= 0;
    if (!ok) throw new Error(`${source}: connect.ca_config.${snake} must be a duration such as "72h"`);
    next[field] = v as string | number;
  }
  const keyType = either(c, 'private_key_type', 'PrivateKeyType');
  if (keyType !== undefined) {
    if (keyType !== 'ec' && keyType !== 'rsa') throw new Error(`${source}: connect.ca_config.private_key_type must be "ec" or "rsa"`);
    next.privateKeyType = keyType;
  }
  const keyBits = either(c, 'private_key_bits', 'PrivateKeyBits');
  if (keyBits !== undefined) {
    if (typeof keyBits !== 'number' || !Number.isInteger(keyBits) || keyBits <= 0) throw new Error(`${source}: connect.ca_config.private_key_bits must be a positive integer`);
    next.privateKeyBits = keyBits;
  }
  if (either(c, 'private_key', 'PrivateKey') || either(c, 'root_cert', 'RootCert')) {
    throw new Error(`${source}: connect.ca_config.private_key and root_cert cannot be set: the built-in CA generates its own keys`);
  }
  initialCaSettings(next, source);
  return next;
}

/** `ports.<prefix>_min_port` / `<prefix>_max_port` over `range`. */
export function applyPortRange(range: PortRange, ports: Json, prefix: 'proxy' | 'sidecar', source: string): PortRange {
  const next = { ...range };
  for (const end of ['min', 'max'] as const) {
    const key = `${prefix}_${end}_port`;
    const v = ports[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) throw new Error(`${source}: ports.${key} must be a port number (1-65535)`);
    next[end] = v;
  }
  return next;
}

/** Checked once every file is applied (a later file may move either end). */
export function portRangeProblem(range: PortRange, prefix: 'proxy' | 'sidecar'): string | undefined {
  return range.min > range.max ? `ports.${prefix}_min_port (${range.min}) must not be greater than ports.${prefix}_max_port (${range.max})` : undefined;
}

/**
 * The CA settings the leader first makes the CA with: ca_config over the provider defaults, judged
 * by the same rules as PUT /v1/connect/ca/configuration (a bad value is a config error at start).
 */
export function initialCaSettings(c: CaBootstrapConfig | undefined, source = 'config'): CaSettings {
  try {
    return requestedSettings({
      Config: { LeafCertTTL: c?.leafCertTtl, RotationPeriod: c?.rotationPeriod, PrivateKeyType: c?.privateKeyType, PrivateKeyBits: c?.privateKeyBits },
    });
  } catch (err) {
    throw new Error(`${source}: connect.ca_config: ${(err as Error).message.replace(/^error configuring provider: /, '')}`);
  }
}

/** What a first leader makes the CA with: the settings and (optionally) the cluster id of `connect.ca_config` (connect/ca-leader.ts). */
export function initialCa(config: { connect: { caConfig?: CaBootstrapConfig } }): { settings: CaSettings; clusterId?: string } {
  return { settings: initialCaSettings(config.connect.caConfig), clusterId: config.connect.caConfig?.clusterId };
}
