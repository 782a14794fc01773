// The tokens this agent's services were registered with (Consul's local State.ServiceToken): a
// managed proxy acts with its service's registration token (connect/proxy-tokens.ts). Kept in
// memory only, as Consul 1.4 keeps them: after a restart a service loaded from the data dir or a
// config file acts with the agent's default token.

export class ServiceTokens {
  /** Service ID → the token it was registered with through the HTTP API ('' for none). */
  private readonly byService = new Map<string, string>();

  remember(serviceId: string, token: string | undefined): void {
    this.byService.set(serviceId, token ?? '');
  }

  forget(serviceId: string): void {
    this.byService.delete(serviceId);
  }

  get(serviceId: string): string | undefined {
    return this.byService.get(serviceId);
  }
}
