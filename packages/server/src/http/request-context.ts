// What a route handler sees of one request (route.ts RouteContext). A class rather than an object
// literal with getters: a literal made three closures per request and asked the socket for its
// peer address whether or not a handler wanted it — on a read answered from memory that was a
// visible share of the server's own work (the abort signal was the larger part; see waitSignal).
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { QueryOptions } from './query-options';
import type { ResponseMeta, RouteContext } from './route';

export class RequestContext implements RouteContext<unknown, unknown, unknown> {
  readonly meta: ResponseMeta = { headers: {} };
  private gone = false;
  private controller: AbortController | undefined;

  constructor(
    private readonly req: IncomingMessage,
    public params: unknown,
    public query: unknown,
    public opts: QueryOptions,
    public body: unknown,
    public rawBody: Buffer | undefined,
  ) {}

  get headers(): IncomingHttpHeaders {
    return this.req.headers;
  }

  get bodyStream(): IncomingMessage {
    return this.req;
  }

  get remoteAddress(): string | undefined {
    return this.req.socket.remoteAddress;
  }

  get rawQuery(): string {
    const url = this.req.url ?? '';
    const q = url.indexOf('?');
    return q < 0 ? '' : url.slice(q + 1);
  }

  /** Made on first use: most requests never block, and an AbortController costs Node ~3 µs. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.gone) this.controller.abort();
    }
    return this.controller.signal;
  }

  /**
   * An arrow, not a method: routes hand it on detached (`const { clientGone } = ctx`, `clientGone:
   * ctx.clientGone`), and rpc.apply calls it as `options.clientGone()`. As a method its `this` was
   * then the options object, so it always answered false and a write whose client had left was
   * still re-sent after an ambiguous failure, and applied later over newer writes (issue 31, finding 3).
   */
  readonly clientGone = (): boolean => this.gone;

  /** The client closed the connection before its answer: end what waits for it. */
  left(): void {
    this.gone = true;
    this.controller?.abort();
  }
}
