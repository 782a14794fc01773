// Identities of writes, given where a write enters the cluster (rpc.apply) and kept across every
// re-send, so the state machine can apply each write once (store requests/request-table.ts).
// A random prefix per process keeps them unique across servers and restarts without coordination.
import { randomBytes } from 'node:crypto';

export class RequestIds {
  private readonly prefix = randomBytes(8).toString('base64url');
  private seq = 0;

  next(): string {
    this.seq += 1;
    return `${this.prefix}.${this.seq.toString(36)}`;
  }
}
