/**
 * A TCP proxy standing for one network link, so a test can break the link
 * without root, iptables or `tc netem` (this kernel has none).
 *
 * Directions are named from the side that dials the proxy: `out` carries the
 * dialler's bytes to the target, `in` carries the target's bytes back.
 *
 * Bytes that a mode stops are held, not thrown away: TCP never loses bytes in
 * the middle of a stream, it only stalls it. Held bytes are delivered, in
 * order, when the mode lets them through again — the late delivery a healed
 * partition causes — unless an endpoint gave up and closed first, or more than
 * `maxHeldBytes` piled up (then the connection is reset, as TCP would
 * eventually do).
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export type LinkMode =
  | { kind: 'pass' }
  /** Nothing gets through either way; connections stay open. */
  | { kind: 'blackhole' }
  /** Current connections are reset and new ones are reset as soon as they are accepted. */
  | { kind: 'reset' }
  /** Every chunk, both ways, is delivered `ms` after it arrived (order is kept). */
  | { kind: 'delay'; ms: number }
  /** One direction stops; the other passes. */
  | { kind: 'drop-one-direction'; direction: Direction };

export type Direction = 'in' | 'out';

export interface LinkProxyOptions {
  /** `host:port` to forward to. */
  target: string;
  /** Bytes held per direction of one connection before it is reset (default 16 MiB). */
  maxHeldBytes?: number;
}

type Held = { kind: 'data'; chunk: Buffer; dueAt: number } | { kind: 'end'; dueAt: number } | { kind: 'reset'; dueAt: number };

/** One direction of one proxied connection: a queue drained into `to` whenever the link mode allows. */
class Flow {
  private readonly queue: Held[] = [];
  private heldBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastDue = 0;
  private stopped = false;

  constructor(
    readonly direction: Direction,
    private readonly to: Socket,
    private readonly proxy: LinkProxy,
    private readonly onOverflow: () => void,
  ) {}

  push(item: { kind: 'data'; chunk: Buffer } | { kind: 'end' } | { kind: 'reset' }): void {
    if (this.stopped) return;
    // Delays never reorder: a chunk is due no earlier than the one before it.
    const dueAt = Math.max(Date.now() + this.proxy.delayMs(), this.lastDue);
    this.lastDue = dueAt;
    this.queue.push({ ...item, dueAt });
    if (item.kind === 'data') {
      this.heldBytes += item.chunk.length;
      if (this.heldBytes > this.proxy.maxHeldBytes) {
        this.onOverflow();
        return;
      }
    }
    this.pump();
  }

  pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.queue.length > 0 && this.proxy.flows(this.direction)) {
      const head = this.queue[0] as Held;
      const wait = head.dueAt - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => this.pump(), wait);
        return;
      }
      this.queue.shift();
      if (head.kind === 'data') this.heldBytes -= head.chunk.length;
      if (this.to.destroyed) continue;
      if (head.kind === 'data') this.to.write(head.chunk);
      else if (head.kind === 'end') this.to.end();
      else this.to.resetAndDestroy();
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
  }
}

/** Both sockets of one proxied connection and the two flows between them. */
class ProxiedConnection {
  readonly out: Flow;
  readonly in: Flow;
  private closed = false;

  constructor(
    readonly client: Socket,
    readonly upstream: Socket,
    proxy: LinkProxy,
    private readonly onClosed: (c: ProxiedConnection) => void,
  ) {
    const overflow = (): void => this.reset();
    this.out = new Flow('out', upstream, proxy, overflow);
    this.in = new Flow('in', client, proxy, overflow);
    this.wire(client, this.out);
    this.wire(upstream, this.in);
  }

  /** Reads from `from` into `flow`; an abrupt close travels like data, so a stopped link hides it too. */
  private wire(from: Socket, flow: Flow): void {
    from.on('data', (chunk: Buffer) => flow.push({ kind: 'data', chunk }));
    from.on('end', () => flow.push({ kind: 'end' }));
    from.on('error', () => flow.push({ kind: 'reset' }));
    from.on('close', () => {
      if (this.client.destroyed && this.upstream.destroyed) this.finish();
    });
  }

  pump(): void {
    this.out.pump();
    this.in.pump();
  }

  reset(): void {
    this.out.stop();
    this.in.stop();
    if (!this.client.destroyed) this.client.resetAndDestroy();
    if (!this.upstream.destroyed) this.upstream.resetAndDestroy();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.out.stop();
    this.in.stop();
    this.onClosed(this);
  }
}

export class LinkProxy {
  private current: LinkMode = { kind: 'pass' };
  private readonly connections = new Set<ProxiedConnection>();
  private accepted = 0;
  readonly maxHeldBytes: number;

  private constructor(
    private readonly server: Server,
    readonly target: string,
    maxHeldBytes: number,
  ) {
    this.maxHeldBytes = maxHeldBytes;
    server.on('connection', (socket) => this.accept(socket));
  }

  /** Listens on 127.0.0.1 on a port the OS picks, forwarding to `target`. */
  static async start(options: LinkProxyOptions): Promise<LinkProxy> {
    // Half-open allowed: a FIN is forwarded like data (and held like data), not answered by Node on the spot.
    const server = createServer({ noDelay: true, allowHalfOpen: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new LinkProxy(server, options.target, options.maxHeldBytes ?? 16 * 1024 * 1024);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `127.0.0.1:port` — the address to give the dialling side instead of `target`. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get mode(): LinkMode {
    return this.current;
  }

  /** Open connections, and connections accepted since start (including reset ones). */
  stats(): { open: number; accepted: number } {
    return { open: this.connections.size, accepted: this.accepted };
  }

  setMode(mode: LinkMode): void {
    if (mode.kind === 'delay' && !(mode.ms >= 0)) throw new Error(`delay must be a non-negative number of ms, got ${mode.ms}`);
    this.current = mode;
    if (mode.kind === 'reset') {
      for (const c of [...this.connections]) c.reset();
      return;
    }
    for (const c of this.connections) c.pump();
  }

  pass(): void {
    this.setMode({ kind: 'pass' });
  }

  blackhole(): void {
    this.setMode({ kind: 'blackhole' });
  }

  reset(): void {
    this.setMode({ kind: 'reset' });
  }

  delay(ms: number): void {
    this.setMode({ kind: 'delay', ms });
  }

  dropOneDirection(direction: Direction): void {
    this.setMode({ kind: 'drop-one-direction', direction });
  }

  /** Whether bytes travelling in `direction` get through in the current mode. */
  flows(direction: Direction): boolean {
    switch (this.current.kind) {
      case 'pass':
      case 'delay':
        return true;
      case 'blackhole':
      case 'reset':
        return false;
      case 'drop-one-direction':
        return this.current.direction !== direction;
    }
  }

  /** Added to every chunk's delivery time. */
  delayMs(): number {
    return this.current.kind === 'delay' ? this.current.ms : 0;
  }

  /** Stops listening and resets every connection. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of [...this.connections]) c.reset();
    await closed;
  }

  private accept(client: Socket): void {
    this.accepted++;
    client.setNoDelay(true);
    if (this.current.kind === 'reset') {
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    const colon = this.target.lastIndexOf(':');
    const host = this.target.slice(0, colon).replace(/^\[|\]$/g, '');
    const upstream = connect({ host, port: Number(this.target.slice(colon + 1)), noDelay: true, allowHalfOpen: true });
    const connection = new ProxiedConnection(client, upstream, this, (c) => this.connections.delete(c));
    this.connections.add(connection);
  }
}
