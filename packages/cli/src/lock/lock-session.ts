// The session a `registry lock` holds its lock with (Consul's api: TTL 15s, renewed every TTL/2,
// destroyed when the lock is given up). `lost` settles when a renewal says the session is gone.
import type { Client } from '../http-client';
import { ApiError } from '../http-client';

const TTL = '15s';
const RENEW_MS = 7_500;

export class LockSession {
  private timer?: NodeJS.Timeout;
  private lostResolve!: () => void;
  readonly lost = new Promise<void>((r) => (this.lostResolve = r));

  private constructor(
    private readonly client: Client,
    readonly id: string,
  ) {}

  static async create(client: Client, name: string): Promise<LockSession> {
    const { ID } = await client.put<{ ID: string }>('/v1/session/create', { Name: name, TTL, Behavior: 'release' });
    const s = new LockSession(client, ID);
    s.scheduleRenew();
    return s;
  }

  private scheduleRenew(): void {
    this.timer = setTimeout(async () => {
      try {
        const reply = await this.client.request('PUT', `/v1/session/renew/${this.id}`, { accept: [404] });
        const entries = reply.status === 404 ? null : reply.json<unknown[] | null>();
        if (!entries || entries.length === 0) return this.lostResolve();
      } catch (e) {
        // An unreachable agent is not proof the session is gone; the key monitor decides that.
        if (e instanceof ApiError && e.status === 404) return this.lostResolve();
      }
      this.scheduleRenew();
    }, RENEW_MS);
    this.timer.unref();
  }

  async destroy(): Promise<void> {
    clearTimeout(this.timer);
    await this.client.put(`/v1/session/destroy/${this.id}`).catch(() => undefined);
  }
}
