// The leader's half of leaf issuance (Consul's ConnectCA.Sign): admit the request, allocate a serial
// through Raft so serials increase across the cluster, sign the agent's CSR with the active root.
// Other servers reach it through the internal RPC `connect.sign`.
import { CertificateRequestError, signLeaf, type Leaf } from '@registry/ca';
import { parseGoDuration, type Command, type SerialBlock, type Store } from '@registry/store';
import { badRequest, serverError, tooManyRequests } from '../errors';
import { RATE_LIMITED, type SignLimiter } from './sign-limiter';

export interface SignedLeaf {
  leaf: Leaf;
  /** The Raft index that allocated the serial: the leaf's CreateIndex/ModifyIndex. */
  index: number;
}

export const CA_NOT_READY = 'CA has not finished initializing';

export class LeafSigner {
  constructor(
    private readonly store: Store,
    private readonly applyInternal: (cmd: Command) => Promise<unknown>,
    private readonly limiter: SignLimiter,
    private readonly datacenter: string,
  ) {}

  async sign(csrPEM: string): Promise<SignedLeaf> {
    if (typeof csrPEM !== 'string' || csrPEM === '') throw badRequest('CSR must be specified');
    if (!this.limiter.tryAcquire()) throw tooManyRequests(RATE_LIMITED);
    try {
      if (!this.store.caSigningRoot()) throw serverError(CA_NOT_READY);
      const block = (await this.applyInternal({ type: 'ca.serials', count: 1 })) as SerialBlock;
      // Read the root after the serial: a rotation committed meanwhile is already in force.
      const root = this.store.caSigningRoot()!;
      const ttlNs = parseGoDuration(this.store.caConfigRecord()?.Config.LeafCertTTL ?? '72h') ?? 72 * 3.6e12;
      try {
        const leaf = signLeaf({ root, csrPEM, serial: block.first, ttlHours: ttlNs / 3.6e12, dc: this.datacenter });
        return { leaf, index: block.index };
      } catch (err) {
        if (err instanceof CertificateRequestError) throw badRequest(err.message);
        throw err;
      }
    } finally {
      this.limiter.release();
    }
  }
}
