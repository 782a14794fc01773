// A load that runs through every server of a cluster while it is changed under it, keeping each
// write the cluster acknowledged: KV puts of keys written once, and now and then a catalog
// register. A write counts as acknowledged only on `200 true`; anything else (a server that is
// down, an election, an unknown outcome) may or may not have been applied, and is not checked.
import type { ClusterHarness } from '../../cluster/support/cluster-harness';
import { sleep } from '../../support/wait';

export const KV_PREFIX = 'upgrade/';
export const NODE_PREFIX = 'upgrade-node-';

export interface AckedWrite {
  kind: 'kv' | 'node';
  /** The KV key or the node name. */
  name: string;
  /** The KV value or the node's address. */
  value: string;
  /** The server that acknowledged it, and which release it ran then. */
  server: number;
  release: string;
}

export interface WriterOptions {
  workers: number;
  /** Every `nodeEvery`-th write of a worker is a catalog register. */
  nodeEvery: number;
  /** Pause between one worker's writes (a load the 2-core CI machine carries beside the servers). */
  pauseMs: number;
  /** Bounds: writes in all, and time. */
  maxWrites: number;
  maxMs: number;
}

export class AckedWriter {
  readonly acked: AckedWrite[] = [];
  /** Answers that were not an acknowledgement, by what they were ("503", "ECONNREFUSED", ...). */
  readonly refused = new Map<string, number>();
  private stopping = false;
  private sent = 0;
  private readonly done: Promise<void>;

  /** `releaseOf(i)`: which release server i runs now (noted with each write it acknowledges). */
  constructor(
    private readonly cluster: ClusterHarness,
    private readonly releaseOf: (i: number) => string,
    private readonly options: WriterOptions,
  ) {
    const deadline = Date.now() + options.maxMs;
    this.done = Promise.all(Array.from({ length: options.workers }, (_, w) => this.work(w, deadline))).then(() => undefined);
  }

  /** Acknowledged writes of server i while it ran `release`. */
  count(server: number, release: string): number {
    return this.acked.filter((a) => a.server === server && a.release === release).length;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.done;
  }

  private async work(worker: number, deadline: number): Promise<void> {
    const servers = this.cluster.servers.length;
    for (let seq = 0; !this.stopping && this.sent < this.options.maxWrites && Date.now() < deadline; seq++) {
      this.sent++;
      // Round robin over the servers, shifted per worker: every server takes writes all the time.
      const server = (worker + seq) % servers;
      const release = this.releaseOf(server);
      const isNode = seq % this.options.nodeEvery === this.options.nodeEvery - 1;
      const name = isNode ? `${NODE_PREFIX}${worker}-${seq}` : `${KV_PREFIX}${worker}/${seq}`;
      const value = isNode ? `10.${worker % 256}.${(seq >> 8) % 256}.${seq % 256}` : `w${worker}s${seq}-${Math.random().toString(36).slice(2)}`;
      try {
        const r = isNode
          ? await this.cluster.http(server, 'PUT', '/v1/catalog/register', { Node: name, Address: value }, { timeoutMs: 15_000 })
          : await this.cluster.http(server, 'PUT', `/v1/kv/${name}`, value, { timeoutMs: 15_000 });
        if (r.status === 200 && r.body.trim() === 'true') this.acked.push({ kind: isNode ? 'node' : 'kv', name, value, server, release });
        else this.note(String(r.status));
      } catch (err) {
        this.note((err as NodeJS.ErrnoException).code ?? 'error');
        await sleep(100); // a server that is down: not a busy loop against it
      }
      await sleep(this.options.pauseMs);
    }
  }

  private note(what: string): void {
    this.refused.set(what, (this.refused.get(what) ?? 0) + 1);
  }
}
