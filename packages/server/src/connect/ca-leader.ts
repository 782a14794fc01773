// The CA's leader duty (Consul's initializeCA / leader CA loop): on the first leadership of the
// cluster, make the cluster id, the trust domain and an EC root and commit them through Raft so every
// server holds the same CA; afterwards, retire rotated-out roots once their leaves have expired.
import { randomUUID } from 'node:crypto';
import { generateRoot, trustDomainFor } from '@registry/ca';
import type { CaSettings, Command, SerialBlock, Store } from '@registry/store';
import type { LeaderDuty } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';

export const CA_PROVIDER = 'registry';
export const DEFAULT_CA_SETTINGS: CaSettings = { LeafCertTTL: '72h', RotationPeriod: '2160h', PrivateKeyType: 'ec', PrivateKeyBits: 256 };

const RETRY_MS = 1_000;
const PRUNE_EVERY_MS = 3600_000;

export class CaLeaderDuty implements LeaderDuty {
  readonly name = 'ca';
  private timer: NodeJS.Timeout | null = null;
  private active = false;

  constructor(
    private readonly store: Store,
    private readonly applyInternal: (cmd: Command) => Promise<unknown>,
    private readonly logger: Logger,
    private readonly enabled: boolean,
    /** From `connect.ca_config`: the settings and (optionally) the cluster id of a CA made here. */
    private readonly initial: { settings: CaSettings; clusterId?: string } = { settings: DEFAULT_CA_SETTINGS },
  ) {}

  start(): void {
    if (!this.enabled) return;
    this.active = true;
    void this.tick();
  }

  stop(): void {
    this.active = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async tick(): Promise<void> {
    let next = PRUNE_EVERY_MS;
    try {
      if (!this.store.caConfigRecord()) await this.initialize();
      else await this.applyInternal({ type: 'ca.prune', now: new Date().toISOString() });
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'CA leader duty failed; retrying');
      next = RETRY_MS;
    }
    if (this.active) this.timer = setTimeout(() => void this.tick(), next);
  }

  private async initialize(): Promise<void> {
    // Consul reads ca_config's cluster_id only here, when the cluster's CA is first made.
    const clusterId = this.initial.clusterId ?? randomUUID();
    const trustDomain = trustDomainFor(clusterId);
    const settings = this.initial.settings;
    const block = (await this.applyInternal({ type: 'ca.serials', count: 1 })) as SerialBlock;
    const root = generateRoot({
      clusterId,
      trustDomain,
      serial: block.first,
      keyType: settings.PrivateKeyType as 'ec' | 'rsa',
      keyBits: settings.PrivateKeyBits,
    });
    await this.applyInternal({ type: 'ca.initialize', Provider: CA_PROVIDER, ClusterID: clusterId, TrustDomain: trustDomain, Config: settings, root });
    this.logger.info({ trustDomain, root: root.ID }, 'initialized the cluster CA');
  }
}
