// A network of transports inside one process, for tests: delivery is asynchronous, messages
// are copied (as if serialised), and links can be cut to partition the cluster.
import type { Message, ServerInfo } from '../core/types';
import type { CallOptions, Transport } from '../interfaces';
import { RemoteError, RpcConnectionError, RpcTimeoutError } from './rpc-errors';
import { toWireError } from './wire';
import type { Caller } from './sender-address';

type Handler = (body: unknown, caller: Caller) => Promise<unknown> | unknown;

export class InMemoryNetwork {
  private readonly members = new Map<string, InMemoryTransport>();
  /** Unordered pairs "a|b" whose link is cut. */
  private readonly cut = new Set<string>();
  private nextPort = 1;

  /** A new transport on this network; the address is made up unless given. */
  transport(address = `mem-${this.nextPort++}:1`): InMemoryTransport {
    if (this.members.has(address)) throw new Error(`address ${address} is already in use`);
    const t = new InMemoryTransport(this, address);
    this.members.set(address, t);
    return t;
  }

  /** Cut every link between servers in different groups; servers in no group are cut from all. */
  partition(...groups: string[][]): void {
    this.heal();
    const groupOf = new Map<string, number>();
    groups.forEach((g, i) => g.forEach((a) => groupOf.set(a, i)));
    const all = [...this.members.keys()];
    for (const a of all) {
      for (const b of all) {
        if (a < b && (groupOf.get(a) === undefined || groupOf.get(a) !== groupOf.get(b))) this.cut.add(`${a}|${b}`);
      }
    }
  }

  /** Cut one server off from everyone. */
  isolate(address: string): void {
    for (const other of this.members.keys()) if (other !== address) this.cut.add(pair(address, other));
  }

  heal(): void {
    this.cut.clear();
  }

  /** Whether a can currently reach b. */
  connected(a: string, b: string): boolean {
    return a === b || (!this.cut.has(pair(a, b)) && this.members.has(b));
  }

  /** @internal */
  member(address: string): InMemoryTransport | undefined {
    return this.members.get(address);
  }

  /** @internal */
  leave(address: string): void {
    this.members.delete(address);
  }
}

function pair(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

export class InMemoryTransport implements Transport {
  private messageHandler: (message: Message, fromAddress?: string) => void = () => undefined;
  private readonly handlers = new Map<string, Handler>();
  private closed = false;

  constructor(
    private readonly network: InMemoryNetwork,
    readonly address: string,
  ) {}

  send(to: ServerInfo, message: Message): void {
    if (this.closed || !this.network.connected(this.address, to.address)) return;
    const copy = structuredClone(message);
    setImmediate(() => {
      // The link must still be up when the message arrives.
      if (this.closed || !this.network.connected(this.address, to.address)) return;
      this.network.member(to.address)?.receive(copy, this.address);
    });
  }

  onMessage(handler: (message: Message, fromAddress?: string) => void): void {
    this.messageHandler = handler;
  }

  handle(method: string, handler: Handler): void {
    this.handlers.set(method, handler);
  }

  call(address: string, method: string, body: unknown, timeoutMs = 5000, _options?: CallOptions): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new RpcTimeoutError(address, method, timeoutMs)), timeoutMs);
      const finish = (err: Error | null, value?: unknown) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value);
      };
      // An unreachable peer looks like a connection that cannot be made.
      const target = this.network.connected(this.address, address) ? this.network.member(address) : undefined;
      if (this.closed || !target) {
        setImmediate(() => finish(new RpcConnectionError(address, method, new Error('unreachable'))));
        return;
      }
      const request = structuredClone(body);
      setImmediate(() => {
        target.serve(method, request).then(
          (result) => {
            if (!this.network.connected(this.address, address)) return; // lost on the way back: times out
            finish(null, structuredClone(result));
          },
          (err: unknown) => {
            const wire = toWireError(err);
            finish(new RemoteError(wire.message, wire.name, wire.data));
          },
        );
      });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.network.leave(this.address);
  }

  /** @internal */
  receive(message: Message, fromAddress: string): void {
    if (this.closed) return;
    try {
      this.messageHandler(message, fromAddress);
    } catch {
      // As over TCP: a message the node cannot handle is dropped.
    }
  }

  /** @internal */
  async serve(method: string, body: unknown): Promise<unknown> {
    const handler = this.handlers.get(method);
    if (this.closed || !handler) throw new Error(`unknown rpc method "${method}"`);
    return (await handler(body, {})) ?? null;
  }
}
