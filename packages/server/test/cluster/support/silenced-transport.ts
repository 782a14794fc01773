// A server's network link that can be switched silent: while silent, its Raft messages are dropped
// both ways and every RPC but the greeting (`cluster.hello`) goes unanswered (the caller times out,
// as with a black-holed link). So the cluster can be asked to add the server — `registry join`
// greets it first — while the server never follows the log nor answers the leader: a joiner still
// starting on a loaded host, or one that never comes up. Switched back, it is an ordinary link.
import type { CallOptions, Caller, Message, ServerInfo, Transport } from '@registry/raft';

type Handler = (body: unknown, caller: Caller) => Promise<unknown> | unknown;

export class SilencedTransport implements Transport {
  silent = true;

  constructor(private readonly inner: Transport) {}

  get address(): string {
    return this.inner.address;
  }

  send(to: ServerInfo, message: Message): void {
    if (!this.silent) this.inner.send(to, message);
  }

  onMessage(handler: (message: Message, fromAddress?: string) => void): void {
    this.inner.onMessage((message, from) => {
      if (!this.silent) handler(message, from);
    });
  }

  call(address: string, method: string, body: unknown, timeoutMs?: number, options?: CallOptions): Promise<unknown> {
    return this.inner.call(address, method, body, timeoutMs, options);
  }

  handle(method: string, handler: Handler): void {
    // A request that is never answered: the caller's own timeout ends it.
    this.inner.handle(method, (body, caller) => (this.silent && method !== 'cluster.hello' ? new Promise(() => undefined) : handler(body, caller)));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
