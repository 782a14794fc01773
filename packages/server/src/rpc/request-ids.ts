// Identities of writes, given where a write enters the cluster (rpc.apply) and kept across every
// re-send, so the state machine can apply each write once (store requests/request-table.ts).
// A random prefix per process keeps them unique across servers and restarts without coordination.
import { randomBytes } from 'node:crypto';

export class RequestIds {
  // 48 random bits: a clash between two processes' prefixes inside one window is vanishingly unlikely,
  // and every byte of an id is carried by every entry, to every server and its disk.
  private readonly prefix = randomBytes(6).toString('base64url');
  private seq = 0;

  next(): string {
    this.seq += 1;
    return `${this.prefix}.${this.seq.toString(36)}`;
  }
}
