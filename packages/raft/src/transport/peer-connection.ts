// One persistent outbound connection to one peer address. While it is down, Raft messages
// are dropped (Raft retries them) and RPC requests wait for the next attempt; attempts back
// off exponentially so a dead peer costs little.
import { connect, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import { writeCoalesced } from './coalesced-write';
import { FrameDecoder, type EncodedFrame } from './frame-codec';
import { monotonicMs } from '../monotonic-clock';

const MIN_BACKOFF_MS = 50;
/**
 * A peer that comes back (a restarted server) is reached at the next attempt, up to this long after
 * it listens: at 2 s this was most of the time a wiped follower spent waiting to hear from the
 * leader (docs/benchmarks/history.md, issue #16), and an attempt at a closed port costs next to nothing.
 */
const MAX_BACKOFF_MS = 500;
/** Frames held while a connection is being made; more than this are dropped. */
const MAX_QUEUED_FRAMES = 4096;
/** Beyond this much unsent data on a live socket, droppable frames are dropped. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

type State =
  | { kind: 'idle'; retryAt: number }
  /** Backing off with RPC requests held for the next attempt. */
  | { kind: 'waiting'; queue: EncodedFrame[]; timer: NodeJS.Timeout }
  | { kind: 'connecting'; socket: Socket; queue: EncodedFrame[] }
  | { kind: 'connected'; socket: Socket }
  | { kind: 'closed' };

export interface PeerConnectionEvents {
  /** A frame from the peer (responses to our requests). */
  onFrame(value: unknown): void;
  /** The connection was lost or a connect attempt failed; requests sent on it will not be answered. */
  onDown(error: Error): void;
}

export function parseAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const port = Number(address.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`invalid address "${address}" (expected host:port)`);
  }
  return { host: address.slice(0, colon).replace(/^\[|\]$/g, ''), port };
}

export class PeerConnection {
  private state: State = { kind: 'idle', retryAt: 0 };
  private backoffMs = MIN_BACKOFF_MS;

  constructor(
    readonly address: string,
    private readonly events: PeerConnectionEvents,
    private readonly maxFrameBytes: number,
    /** Dial with TLS (the peer's certificate is checked as these options say). */
    private readonly tls?: ConnectionOptions,
  ) {}

  get connected(): boolean {
    return this.state.kind === 'connected';
  }

  /**
   * Sends a frame. `mustTry` frames (RPC requests) wait for a reconnect instead of being
   * dropped while backing off. Returns false if the frame was dropped.
   */
  write(frame: EncodedFrame, mustTry: boolean): boolean {
    const state = this.state;
    switch (state.kind) {
      case 'connected':
        if (!mustTry && state.socket.writableLength > MAX_BUFFERED_BYTES) return false;
        writeCoalesced(state.socket, frame);
        return true;
      case 'connecting':
        if (state.queue.length >= MAX_QUEUED_FRAMES) return false;
        state.queue.push(frame);
        return true;
      case 'waiting':
        if (!mustTry || state.queue.length >= MAX_QUEUED_FRAMES) return false;
        state.queue.push(frame);
        return true;
      case 'idle': {
        const wait = state.retryAt - monotonicMs();
        if (wait <= 0) {
          this.open([frame]);
          return true;
        }
        if (!mustTry) return false;
        const queue = [frame];
        const timer = setTimeout(() => this.open(queue), wait);
        this.state = { kind: 'waiting', queue, timer };
        return true;
      }
      case 'closed':
        return false;
    }
  }

  /**
   * Drop the connection so that nothing queued on it is ever delivered: a plain TCP socket is
   * reset (RST, the kernel's send queue discarded), not closed (a close still sends what is queued,
   * then FIN). A TLS socket can only be destroyed, whose queued bytes the kernel may still deliver.
   * The next write dials again; requests in flight fail through onDown.
   */
  reset(reason: string): void {
    const state = this.state;
    if (state.kind !== 'connecting' && state.kind !== 'connected') return;
    const socket = state.socket;
    if (!this.tls && !socket.connecting) socket.resetAndDestroy();
    else socket.destroy(new Error(`connection to ${this.address} reset: ${reason}`));
  }

  close(): void {
    const state = this.state;
    this.state = { kind: 'closed' };
    if (state.kind === 'waiting') clearTimeout(state.timer);
    if (state.kind === 'connecting' || state.kind === 'connected') state.socket.destroy();
  }

  private open(queue: EncodedFrame[]): void {
    const { host, port } = parseAddress(this.address);
    const socket = this.tls ? connectTls({ ...this.tls, host, port }).setNoDelay(true) : connect({ host, port, noDelay: true });
    const state: State = { kind: 'connecting', socket, queue };
    this.state = state;
    const decoder = new FrameDecoder(this.maxFrameBytes);
    // Over TLS the link is up once the handshake has checked the peer, not at the TCP connect.
    socket.on(this.tls ? 'secureConnect' : 'connect', () => {
      if (this.state !== state) return;
      this.backoffMs = MIN_BACKOFF_MS;
      this.state = { kind: 'connected', socket };
      socket.setKeepAlive(true, 10_000);
      for (const frame of state.queue) writeCoalesced(socket, frame);
    });
    socket.on('data', (chunk: Buffer) => {
      let values: unknown[];
      try {
        values = decoder.push(chunk);
      } catch (err) {
        socket.destroy(err as Error);
        return;
      }
      for (const v of values) this.events.onFrame(v);
    });
    let failed = false;
    const down = (error: Error) => {
      if (failed) return;
      failed = true;
      const current = this.state;
      if (current.kind === 'closed') return;
      if ((current.kind === 'connecting' || current.kind === 'connected') && current.socket !== socket) return;
      this.state = { kind: 'idle', retryAt: monotonicMs() + this.backoffMs };
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
      this.events.onDown(error);
    };
    socket.on('error', (err) => down(err));
    socket.on('close', () => down(new Error(`connection to ${this.address} closed`)));
  }
}
