// One DNS TCP connection: messages framed by a two-byte length (RFC 1035 §4.2.2, RFC 7766),
// answered in the order they came. Pipelining is bounded (issue 31, finding 2): at most
// `maxInFlight` queries are taken from the stream before their answers are written, and none while
// the socket's write buffer is over its mark (a client that does not read its answers); then the
// socket is paused — the kernel's buffers fill and the client's sends block, as TCP intends — and
// reading resumes when answers are written and the buffer drains. What one connection holds is
// thus bounded: one read chunk, `maxInFlight` answers, one write buffer.
//
// Lookups may finish without leaving the microtask queue; were the next queries taken right there,
// a connection with a full stream would answer on and on in one turn of the event loop and starve
// UDP, HTTP and Raft. So after answers are written the next ones are taken in a later turn
// (setImmediate): one connection answers at most `maxInFlight` queries per turn.
//
// Timers: a connection must send a whole query within the first-query timeout, and is closed after
// the idle timeout with no query received and no answer sent (a lookup still running keeps it).
import type { Socket } from 'node:net';
import type { TcpTimeout } from './observer';

/** The answer to one message (undefined: none is sent). Never rejects. */
export type AnswerMessage = (msg: Buffer) => Promise<Buffer | undefined>;

export interface TcpConnectionLimits {
  maxInFlight: number;
  firstQueryTimeoutMs: number;
  idleTimeoutMs: number;
}

export interface TcpConnectionOptions extends TcpConnectionLimits {
  answer: AnswerMessage;
  timedOut?: (reason: TcpTimeout) => void;
}

/** The smallest message that can be answered (a header); anything shorter ends the connection. */
const HEADER_BYTES = 12;
const EMPTY = Buffer.alloc(0);

export class DnsTcpConnection {
  private buffered: Buffer = EMPTY;
  /** Queries taken from the stream whose answers are not yet written. */
  private inFlight = 0;
  /** Lookups running (their connection is not idle). */
  private working = 0;
  private gotQuery = false;
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout;
  /** When the current timeout's countdown began (monotonic ms): accept, then the last activity. */
  private since = performance.now();
  /** The timer runs for what was left of a timeout (setLimits), not a whole one: refresh() would repeat that. */
  private partial = false;
  private takeScheduled = false;

  constructor(
    private readonly sock: Socket,
    private opts: TcpConnectionOptions,
  ) {
    sock.setNoDelay(true);
    sock.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
      this.take();
    });
    sock.on('drain', () => this.take());
    sock.on('error', () => sock.destroy());
    sock.on('close', () => clearTimeout(this.timer));
    this.timer = setTimeout(() => this.onTimer(), opts.firstQueryTimeoutMs);
  }

  /**
   * New bounds (a reload): the pipelining bound applies to the next query taken; the running timeout
   * (first query or idle) is measured with its new length from the same start, so a connection
   * already silent for longer than a lowered timeout is closed now.
   */
  setLimits(limits: TcpConnectionLimits): void {
    this.opts = { ...this.opts, ...limits };
    if (this.sock.destroyed) return;
    clearTimeout(this.timer);
    const length = this.gotQuery ? limits.idleTimeoutMs : limits.firstQueryTimeoutMs;
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, this.since + length - performance.now()));
    this.partial = true;
    this.take();
  }

  private full(): boolean {
    return this.inFlight >= this.opts.maxInFlight || this.sock.writableNeedDrain;
  }

  /** Starts the whole messages buffered, as far as the bounds allow; reads on only below them. */
  private take(): void {
    if (this.sock.destroyed) return;
    while (!this.full() && this.buffered.length >= 2) {
      const len = this.buffered.readUInt16BE(0);
      if (this.buffered.length < 2 + len) break;
      const msg = this.buffered.subarray(2, 2 + len);
      this.buffered = this.buffered.length === 2 + len ? EMPTY : this.buffered.subarray(2 + len);
      if (len < HEADER_BYTES) {
        // Not even a header to answer FORMERR to: the stream cannot be trusted to be framed.
        this.sock.destroy();
        return;
      }
      this.start(msg);
    }
    if (this.full()) this.sock.pause();
    else if (this.sock.isPaused()) this.sock.resume();
  }

  private start(msg: Buffer): void {
    this.inFlight++;
    this.working++;
    this.noteActivity();
    const answer = this.opts.answer(msg).finally(() => this.working--);
    // Answers go back in the order the queries came (one chain per connection).
    this.chain = this.chain
      .then(() => answer)
      .then((out) => {
        this.inFlight--;
        if (out && !this.sock.destroyed) {
          const len = Buffer.alloc(2);
          len.writeUInt16BE(out.length);
          this.sock.write(Buffer.concat([len, out]), () => this.noteActivity());
        }
        this.takeLater();
      });
  }

  private takeLater(): void {
    if (this.takeScheduled) return;
    this.takeScheduled = true;
    setImmediate(() => {
      this.takeScheduled = false;
      this.take();
    });
  }

  private noteActivity(): void {
    if (this.sock.destroyed) return;
    this.since = performance.now();
    if (!this.gotQuery) {
      // The first query came: from now on the idle timeout.
      this.gotQuery = true;
      this.partial = false;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.onTimer(), this.opts.idleTimeoutMs);
      return;
    }
    this.restartTimer();
  }

  /** The current timeout again, in full, from now. */
  private restartTimer(): void {
    if (!this.partial) {
      this.timer.refresh();
      return;
    }
    this.partial = false;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.onTimer(), this.gotQuery ? this.opts.idleTimeoutMs : this.opts.firstQueryTimeoutMs);
  }

  private onTimer(): void {
    if (this.working > 0) {
      this.since = performance.now();
      this.restartTimer();
      return;
    }
    this.opts.timedOut?.(this.gotQuery ? 'idle' : 'first_query');
    this.sock.destroy();
  }
}
