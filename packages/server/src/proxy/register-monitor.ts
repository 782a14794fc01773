// `-register` (Consul's command/connect/proxy/register.go): the proxy registers itself with the
// local agent as a connect-proxy for its service, with a TTL check it keeps passing, and removes the
// registration when it stops.
import type { AgentApi } from './agent-api';
import type { ProxyLog } from './proxy-log';

const TTL = '30s';
const PASS_EVERY_MS = 10_000;

export class RegisterMonitor {
  private timer: NodeJS.Timeout | undefined;
  readonly serviceId: string;

  constructor(
    private readonly api: AgentApi,
    private readonly service: string,
    private readonly address: string,
    private readonly port: number,
    idSuffix: string,
    private readonly log: ProxyLog,
  ) {
    this.serviceId = `${service}-proxy${idSuffix ? `-${idSuffix}` : ''}`;
  }

  private get checkId(): string {
    return `${this.serviceId}-ttl`;
  }

  async start(): Promise<void> {
    await this.register();
    this.timer = setInterval(() => void this.pass(), PASS_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    try {
      await this.api.put(`/v1/agent/service/deregister/${encodeURIComponent(this.serviceId)}`, undefined);
    } catch (err) {
      this.log.warn('deregistering the proxy failed', { err: (err as Error).message });
    }
  }

  private async register(): Promise<void> {
    await this.api.put('/v1/agent/service/register', {
      Kind: 'connect-proxy',
      ID: this.serviceId,
      Name: `${this.service}-proxy`,
      Address: this.address === '0.0.0.0' || this.address === '::' ? '' : this.address,
      Port: this.port,
      Proxy: { DestinationServiceName: this.service },
      Check: { CheckID: this.checkId, Name: 'proxy heartbeat', TTL, Notes: 'Built-in proxy will heartbeat this check.' },
    });
    await this.pass();
  }

  /** A lost registration (the agent restarted) is made again. */
  private async pass(): Promise<void> {
    try {
      await this.api.put(`/v1/agent/check/pass/${encodeURIComponent(this.checkId)}`, undefined);
    } catch (err) {
      this.log.warn('proxy heartbeat failed; registering again', { err: (err as Error).message });
      try {
        await this.register();
      } catch (again) {
        this.log.warn('registering the proxy failed', { err: (again as Error).message });
      }
    }
  }
}
